package timeout_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

// A waiter's probe (a write of its own node) is applied, but its answer is
// lost with the connection. The client reconnects to a member that has not
// applied the probe yet: a read of the node without a sync first returns
// the version before the probe. The waiter must not take that version for
// its node's: with it, the "held" record after the acquisition fails with
// BadVersion, which reads as an eviction, and a hold that was never
// evicted is reported lost.
func TestLostProbeAnswerDoesNotCostTheLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const lease = time.Second
	path := zktest.LockPath(t)
	holder := leaseHolder(t, ctx, path, "holder")

	// The waiter's clock runs three times too fast until its probe: it
	// takes the renewing holder for expired and probes. Then it steps a
	// minute back, and the waiter, its guess of ZooKeeper's clock now too
	// low, waits without probing again.
	clock := &rateClock{last: time.Now(), now: time.Now(), rate: 3}
	w := zktest.NewWire(t)
	var mu sync.Mutex
	probed, synced, staled, lost := "", false, make(chan bool, 1), make(chan struct{})
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		again := probed != "" && r.Request.Conn > 1 && r.Request.Path == probed
		switch {
		case probed == "" && r.Request.Op == zktest.OpSetData && r.Err == 0:
			probed = r.Request.Path // applied; its answer is lost
			clock.step(-time.Minute)
			close(lost)
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
	case <-lost:
	case <-ctx.Done():
		t.Fatal("the waiter never probed")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("holder: Unlock: %v", err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("waiter: Lock after a lost probe answer: %v; want the lock", err)
	}
	// The "held" record is the first write after the lost probe: it must
	// learn the node's version first, with a sync.
	select {
	case stale := <-staled:
		t.Logf("the waiter read its node again after the lost probe, stale answer given: %v", stale)
	case <-ctx.Done():
		t.Fatal("the waiter never read its node again after its lost probe")
	}
	raw := zktest.Connect(t)
	require.Eventually(t, func() bool {
		data, _, err := raw.Get(waiter.Node())
		return err == nil && string(data) == string(timeout.EncodeLease(lease, true))
	}, 10*time.Second, 10*time.Millisecond, "the waiter's \"held\" record never landed")
	if err := waiter.Err(); err != nil {
		t.Fatalf("waiter: the hold was lost after a lost probe answer: %v", err)
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
	m := newMutex(t, conn, path, timeout.WithLease(lease))
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
	// Done is the monitor's (the lease ends a hold through it), so it
	// closes when the monitor gives the hold up, whatever the renewal.
	locktest.RequireClosedWithin(t, m.Done(), lease+st, "the hold of a holder cut off at a renewal")
	w.ReleaseDials()
	if err := m.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Unlock after the hold was given up: %v, want ErrLockLost", err)
	}
}

// One waiter judges the head, whatever the length of the queue: the first
// in line that speaks leases. Waiters behind it read nothing while the
// holder renews but a listing per lease of the waiter ahead of them.
func TestOnlyTheFirstLeaseWaiterJudges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	head := leaseHolder(t, ctx, path, "head")
	var waiters []*timeout.Mutex
	var results []<-chan error
	for i := range 3 {
		w := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
		waiters = append(waiters, w)
		results = append(results, lockAsync(ctx, w))
		waitChildren(t, raw, path, 2+i)
	}
	// Each waiter has listed the queue and set its watch once the
	// requests of the ones that do not judge stop moving for a while.
	settled(t, ctx, waiters[1:])
	before := make([]int64, len(waiters))
	for i, w := range waiters {
		before[i] = w.Stats().Requests
	}
	time.Sleep(3 * lease) // an observation window: the holder renews about nine times in it
	for i, w := range waiters {
		sent := w.Stats().Requests - before[i]
		switch {
		case i == 0 && sent == 0:
			t.Errorf("the waiter right behind the head sent nothing in %v: it should judge the head's lease", 3*lease)
		case i > 0 && w.Writes().Probes != 0:
			t.Errorf("waiter %d (behind a waiter that speaks leases) probed ZooKeeper's clock %d times: only the judge may", i+1, w.Writes().Probes)
		case i > 0 && sent > 10:
			// A listing per lease of the waiter ahead, and a new watch
			// whenever that waiter's node changes (its own probes).
			t.Errorf("waiter %d (behind a waiter that speaks leases) sent %d requests in %v; want a few listings, not a judge's reads", i+1, sent, 3*lease)
		}
	}
	if err := head.Unlock(ctx); err != nil {
		t.Fatalf("head: Unlock: %v", err)
	}
	for i, w := range waiters {
		if err := <-results[i]; err != nil {
			t.Fatalf("waiter %d: Lock: %v", i+1, err)
		}
		if err := w.Unlock(ctx); err != nil {
			t.Errorf("waiter %d: Unlock: %v", i+1, err)
		}
	}
}

// A waiter behind a contender that does not speak leases (a sequential
// lock here; Curator or kazoo alike) judges the head itself: otherwise
// nobody would, and an expired head would keep the lock.
func TestWaiterBehindANonLeaseContenderJudges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	head := leaseHolder(t, ctx, path, "head")
	seq, err := sequential.New(zktest.Connected(t), path)
	if err != nil {
		t.Fatal(err)
	}
	seqDone := make(chan error, 1)
	go func() { seqDone <- seq.Lock(ctx) }()
	waitChildren(t, raw, path, 2)
	judge, judged := leaseWaiter(t, ctx, raw, path, 3)

	resume := head.PauseRenewal() // a holder stuck with its session alive
	defer resume()
	select {
	case err := <-seqDone:
		if err != nil {
			t.Fatalf("sequential: Lock: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the expired head was never evicted: the timeout waiter behind the sequential one did not judge it")
	}
	// The new holder hears of the deletion before the judge has the
	// answer to its delete: look until the count is in.
	for judge.Evictions() == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := judge.Evictions(); n != 1 {
		t.Errorf("the third in line evicted %d heads; want 1", n)
	}
	if err := seq.Unlock(ctx); err != nil {
		t.Errorf("sequential: Unlock: %v", err)
	}
	if err := <-judged; err != nil {
		t.Fatalf("judge: Lock: %v", err)
	}
	if err := judge.Unlock(ctx); err != nil {
		t.Errorf("judge: Unlock: %v", err)
	}
	resume()
	if err := head.Unlock(ctx); !errors.Is(err, timeout.ErrEvicted) {
		t.Errorf("head: Unlock after its eviction: %v, want ErrEvicted", err)
	}
}

// settled waits until the requests of ms stop moving for a while: each has
// made the requests of joining the queue and setting its watch.
func settled(t *testing.T, ctx context.Context, ms []*timeout.Mutex) {
	t.Helper()
	total := func() (n int64) {
		for _, m := range ms {
			n += m.Stats().Requests
		}
		return n
	}
	last := total()
	for ctx.Err() == nil {
		time.Sleep(lease / 3)
		now := total()
		if now == last {
			return
		}
		last = now
	}
	t.Fatal("the waiters' requests never settled")
}

// After a handoff the new holder's successor learns of it only from a
// listing: a handoff wakes the new holder alone. It must still judge the
// new holder, and evict it once its renewals stop.
func TestJudgeAfterAHandoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := zktest.Connect(t)
	path := zktest.LockPath(t)
	first := leaseHolder(t, ctx, path, "first")
	next, nextLocked := leaseWaiter(t, ctx, raw, path, 2)
	judge, judged := leaseWaiter(t, ctx, raw, path, 3)

	if err := first.Unlock(ctx); err != nil {
		t.Fatalf("first: Unlock: %v", err)
	}
	if err := <-nextLocked; err != nil {
		t.Fatalf("next: Lock: %v", err)
	}
	resume := next.PauseRenewal() // the new holder stops renewing, its session alive
	defer resume()
	select {
	case err := <-judged:
		if err != nil {
			t.Fatalf("judge: Lock: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the new holder was never evicted: its successor never judged it")
	}
	if n := judge.Evictions(); n != 1 {
		t.Errorf("the successor evicted %d holders; want 1", n)
	}
	if err := judge.Unlock(ctx); err != nil {
		t.Errorf("judge: Unlock: %v", err)
	}
	resume()
	if err := next.Unlock(ctx); !errors.Is(err, timeout.ErrEvicted) {
		t.Errorf("next: Unlock after its eviction: %v, want ErrEvicted", err)
	}
}

// leaseHolder is a Mutex with the tests' lease that holds the lock on path.
func leaseHolder(t *testing.T, ctx context.Context, path, who string) *timeout.Mutex {
	t.Helper()
	m := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("%s: Lock: %v", who, err)
	}
	return m
}

// leaseWaiter is a Mutex with the tests' lease whose Lock waits on path,
// once it is the nth node there.
func leaseWaiter(t *testing.T, ctx context.Context, raw *zk.Conn, path string, nth int) (*timeout.Mutex, <-chan error) {
	t.Helper()
	m := newMutex(t, zktest.Connect(t), path, timeout.WithLease(lease))
	res := lockAsync(ctx, m)
	waitChildren(t, raw, path, nth)
	return m, res
}
