package timeout_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/timeout"
)

// A waiter's probe (a write of its own node) is applied, but its answer is
// lost with the connection. The client reconnects to a member that has not
// applied the probe yet: a read of the node without a sync first returns
// the version before the probe. The waiter must not take that version for
// its node's: with it, the "held" stamp after the acquisition fails with
// BadVersion, which reads as an eviction, and a Lock that got the lock
// reports it lost.
func TestLostProbeAnswerDoesNotCostTheLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const lease = time.Second
	path := zktest.LockPath(t)
	holder := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	if err := holder.Lock(ctx); err != nil {
		t.Fatalf("holder: Lock: %v", err)
	}

	// The waiter's clock runs three times too fast until its probe: it
	// takes the renewing holder for expired and probes. Then it steps a
	// minute back, and the waiter, its guess of ZooKeeper's clock now too
	// low, waits without probing again.
	clock := &rateClock{last: time.Now(), now: time.Now(), rate: 3}
	w := zktest.NewWire(t)
	var mu sync.Mutex
	probed, synced, staled := "", false, make(chan bool, 1)
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		again := probed != "" && r.Request.Conn > 1 && r.Request.Path == probed
		switch {
		case probed == "" && r.Request.Op == zktest.OpSetData && r.Err == 0:
			probed = r.Request.Path // applied; its answer is lost
			clock.step(-time.Minute)
			return zktest.Break
		case again && r.Request.Op == zktest.OpSync:
			synced = true
		case again && r.Request.Op == zktest.OpGetData && !r.Request.Watch: // the lease check's, not the monitor's
			if v, ok := zktest.GetDataVersion(r.Body); ok && !synced && v > 0 {
				zktest.SetGetDataVersion(r.Body, v-1)
			}
			select {
			case staled <- !synced:
			default:
			}
			probed = "-" // one read is enough
		}
		return zktest.Pass
	})
	waiter := newMutex(t, zktest.Connect(t, zktest.WithDialer(w.Dialer())), path,
		timeout.WithLease(lease), timeout.WithClock(clock.Now))
	locked := make(chan error, 1)
	go func() { locked <- waiter.Lock(ctx) }()
	select {
	case stale := <-staled:
		t.Logf("the waiter read its node again after the lost probe, stale answer given: %v", stale)
	case <-ctx.Done():
		t.Fatal("the waiter never read its node again after its lost probe")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("holder: Unlock: %v", err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("waiter: Lock after a lost probe answer and a stale read: %v; want the lock", err)
	}
	t.Logf("waiter's lease writes: %+v", waiter.Writes())
	if err := waiter.Unlock(ctx); err != nil {
		t.Errorf("waiter: Unlock: %v", err)
	}
}

// rateClock is a local clock that runs rate times as fast as the real one.
type rateClock struct {
	mu        sync.Mutex
	last, now time.Time
	rate      int
}

func (c *rateClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	real := time.Now()
	c.now = c.now.Add(time.Duration(c.rate) * real.Sub(c.last))
	c.last = real
	return c.now
}

// step moves the clock by d and makes it run at the real rate from now on.
func (c *rateClock) step(d time.Duration) {
	c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now, c.rate = c.now.Add(d), 1
}

// A renewal that hangs (its connection broke, and the next one is slow
// to come: a dial or handshake that stalls) must not keep Done open after
// the sequential lock's monitor has given the hold up: with a lease longer
// than the session timeout, the renewal's own bound comes seconds after
// the session may have expired and the next holder taken over.
func TestHungRenewalDoesNotDelayDone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	const st, lease = 6 * time.Second, 9 * time.Second
	w := zktest.NewWire(t)
	defer w.ReleaseDials() // before the connection's own clean-up closes it
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	path := zktest.LockPath(t)
	m := newMutex(t, conn, path, timeout.WithLease(lease), timeout.WithSessionTimeout(st))
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		if r.Op == zktest.OpSetData && strings.HasPrefix(r.Path, path+"/") {
			w.HoldDials()
			return zktest.Break
		}
		return zktest.Pass
	})
	queue := m.QueueDone()
	locktest.RequireClosedWithin(t, queue, lease+st, "the sequential hold of a holder cut off at a renewal")
	locktest.RequireClosedWithin(t, m.Done(), 500*time.Millisecond, "the timeout hold, once its sequential hold has ended")
	w.ReleaseDials()
	if err := m.Unlock(ctx); !errors.Is(err, timeout.ErrLockLost) {
		t.Errorf("Unlock after the hold was given up: %v, want ErrLockLost", err)
	}
}
