package timeout

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklocks/zklocks"
)

// Test seams, visible to this package's tests only.

// WithClock replaces the local clock of the lease logic with now, and
// makes the Mutex's renewals pausable (PauseRenewal).
func WithClock(now func() time.Time) zklocks.Option {
	return zklocks.VariantOption(optClock, clock(&testClock{now: now}))
}

// testClock is a local clock whose timers a pause holds back: a holder
// whose renewals and its own check of its lease stall while its session
// lives, as in a process that stalls but for its heartbeats.
type testClock struct {
	now    func() time.Time
	mu     sync.Mutex
	paused chan struct{} // closed by resume; nil while running
}

func (c *testClock) Now() time.Time { return c.now() }

func (c *testClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	time.AfterFunc(d, func() {
		c.mu.Lock()
		p := c.paused
		c.mu.Unlock()
		if p != nil {
			<-p
		}
		ch <- c.now()
	})
	return ch
}

// PauseRenewal stops m's renewals (and its own check of its lease) until
// resume is called: a holder whose renewer stalls while its session lives.
// m must have been made WithClock.
func (m *Mutex) PauseRenewal() (resume func()) {
	c := m.clock.(*testClock)
	p := make(chan struct{})
	c.mu.Lock()
	c.paused = p
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			if c.paused == p {
				c.paused = nil
			}
			c.mu.Unlock()
			close(p)
		})
	}
}

// LeaseWrites counts the writes m's lease logic has sent, by kind.
type LeaseWrites struct {
	Stamps, Renewals, Probes, Evictions, Drops int64
}

// Total is the number of writes.
func (w LeaseWrites) Total() int64 {
	return w.Stamps + w.Renewals + w.Probes + w.Evictions + w.Drops
}

// Sub returns w - o, kind by kind.
func (w LeaseWrites) Sub(o LeaseWrites) LeaseWrites {
	return LeaseWrites{w.Stamps - o.Stamps, w.Renewals - o.Renewals, w.Probes - o.Probes,
		w.Evictions - o.Evictions, w.Drops - o.Drops}
}

// Add returns w + o, kind by kind.
func (w LeaseWrites) Add(o LeaseWrites) LeaseWrites {
	return LeaseWrites{w.Stamps + o.Stamps, w.Renewals + o.Renewals, w.Probes + o.Probes,
		w.Evictions + o.Evictions, w.Drops + o.Drops}
}

// writes holds each Mutex's counts, by kind (leaseWrite).
var writes sync.Map // *Mutex -> *[dropWrite + 1]atomic.Int64

func init() {
	countWrite = func(m *Mutex, kind leaseWrite) {
		n, _ := writes.LoadOrStore(m, new([dropWrite + 1]atomic.Int64))
		n.(*[dropWrite + 1]atomic.Int64)[kind].Add(1)
	}
}

// Writes returns what m's lease logic has sent so far.
func (m *Mutex) Writes() LeaseWrites {
	n, _ := writes.LoadOrStore(m, new([dropWrite + 1]atomic.Int64))
	c := n.(*[dropWrite + 1]atomic.Int64)
	return LeaseWrites{c[stampWrite].Load(), c[renewalWrite].Load(), c[probeWrite].Load(), c[evictWrite].Load(), c[dropWrite].Load()}
}

// EvictionAttempts counts the eviction deletes m sent, successful or not.
func (m *Mutex) EvictionAttempts() int64 { return m.Writes().Evictions }

var EncodeLease = encodeLease

// ParseLease is DecodeLease, field by field.
func ParseLease(data []byte) (lease time.Duration, held, ok bool) {
	rec, ok := DecodeLease(data)
	return rec.Length, rec.Held, ok
}
