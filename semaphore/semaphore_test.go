package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/semaphore"
)

// With one permit the semaphore is a mutex, and must pass the suite
// every lock passes.
func TestConformance(t *testing.T) {
	locktest.Run(t, locktest.Variant{
		Name: "semaphore",
		New: func(s *zklocks.Session, path string, opts ...zklocks.Option) (zklocks.Locker, error) {
			m, err := semaphore.New(s, path, 1, opts...)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		FIFO:   true,
		Layout: locktest.ChildrenOfPath,
	})
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// contenders returns n Semaphores with permits permits on path, each on a
// session of its own, as n processes would have.
func contenders(t *testing.T, path string, permits, n int) []*semaphore.Semaphore {
	t.Helper()
	var out []*semaphore.Semaphore
	for range n {
		s, err := semaphore.New(zktest.Session(t, zktest.Connect(t)), path, permits)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestNewRejectsBadInput(t *testing.T) {
	s := zktest.Session(t, zktest.Connect(t))
	path := zktest.LockPath(t)
	cases := []struct {
		name    string
		s       *zklocks.Session
		path    string
		permits int
		want    error
	}{
		{"NoPermits", s, path, 0, zklocks.ErrBadOption},
		{"NegativePermits", s, path, -3, zklocks.ErrBadOption},
		{"NilSession", nil, path, 2, zklocks.ErrNilSession},
		{"RelativePath", s, "locks/x", 2, zklocks.ErrBadPath},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := semaphore.New(c.s, c.path, c.permits)
			if !errors.Is(err, c.want) || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error wrapping %v", m, err, c.want)
			}
		})
	}
}

// N contenders hold at once, each with its own node and token; the
// N+1st is refused by TryLock and waits in Lock until one of them leaves.
func TestNHoldAtOnceAndTheNextWaits(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	const permits = 3
	path := zktest.LockPath(t)
	cs := contenders(t, path, permits, permits+1)
	tokens := map[int64]bool{}
	for i, c := range cs[:permits] {
		if err := c.Lock(ctx); err != nil {
			t.Fatalf("contender %d: %v", i, err)
		}
		tokens[c.Token()] = true
	}
	if len(tokens) != permits || tokens[0] {
		t.Errorf("tokens of the %d holders: %v; want %d different, none 0", permits, tokens, permits)
	}
	last := cs[permits]
	if err := last.TryLock(ctx); !errors.Is(err, zklocks.ErrLocked) {
		t.Fatalf("TryLock with every permit held = %v; want ErrLocked", err)
	}
	if n := last.Node(); n != "" {
		t.Errorf("refused TryLock left Node() = %q", n)
	}
	res := make(chan error, 1)
	go func() { res <- last.Lock(ctx) }()
	waitQueued(t, ctx, path, permits+1)
	select {
	case err := <-res:
		t.Fatalf("Lock returned %v with every permit held", err)
	default:
	}
	if err := cs[1].Unlock(ctx); err != nil { // any holder, not the first
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatalf("Lock after a permit came back: %v", err)
	}
	for _, c := range []*semaphore.Semaphore{cs[0], cs[2], last} {
		if err := c.Unlock(ctx); err != nil {
			t.Error(err)
		}
	}
}

// Many contenders cycle through a semaphore of N permits: never more than
// N hold at once, and N do hold at once (or the check proves nothing).
// The count is taken between Lock's return and Unlock's call, inside
// every real hold, so a count above N is a violation.
func TestNeverMoreThanNHolders(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	const permits, clients, rounds = 2, 6, 8
	cs := contenders(t, zktest.LockPath(t), permits, clients)
	var mu sync.Mutex
	holding, most := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := c.Lock(ctx); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				holding++
				most = max(most, holding)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // hold a little, so that holds overlap
				mu.Lock()
				holding--
				mu.Unlock()
				if err := c.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if most > permits {
		t.Fatalf("%d holders at once; the semaphore has %d permits", most, permits)
	}
	if most < permits {
		t.Fatalf("at most %d holders at once in %d holds; want %d, or the check proves nothing", most, clients*rounds, permits)
	}
}

// A release wakes the first waiter and, through its announcement, the
// one behind it: the watch events per acquisition stay flat as waiters
// are added, where waiters that all watched one node would pay one event
// each on every release.
func TestWatchEventsPerAcquisitionDoNotGrowWithWaiters(t *testing.T) {
	perAcq := map[int]float64{}
	for _, waiters := range []int{3, 12} {
		ctx := testContext(t, 60*time.Second)
		const permits = 2
		path := zktest.LockPath(t) + fmt.Sprintf("/w%d", waiters)
		cs := contenders(t, path, permits, permits+waiters)
		for _, c := range cs[:permits] {
			if err := c.Lock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, waiters)
		for _, c := range cs[permits:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.Lock(ctx); err != nil {
					errs <- err
					return
				}
				errs <- c.Unlock(ctx)
			}()
		}
		waitQueued(t, ctx, path, permits+waiters)
		for _, c := range cs[:permits] {
			if err := c.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var events int64
		for _, c := range cs {
			events += c.Stats().Notifications
		}
		perAcq[waiters] = float64(events) / float64(len(cs))
		t.Logf("%d permits, %d waiters: %d watch events for %d acquisitions, %.2f each", permits, waiters, events, len(cs), perAcq[waiters])
	}
	if perAcq[12] > perAcq[3]+1 || perAcq[12] > 4 {
		t.Errorf("watch events per acquisition: %.2f with 3 waiters, %.2f with 12; want them flat (within 1) and at most 4", perAcq[3], perAcq[12])
	}
}

// waitQueued waits until the queue at path has want nodes.
func waitQueued(t *testing.T, ctx context.Context, path string, want int) {
	t.Helper()
	conn := zktest.Connect(t)
	for {
		kids, _, err := conn.Children(path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
		if len(kids) >= want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d nodes queued, want %d: %v", len(kids), want, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A holder whose node is deleted (an operator; an expired session does
// the same) loses its permit: its Done closes, and the first waiter gets
// the permit.
func TestLostPermitLetsTheFirstWaiterIn(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	cs := contenders(t, path, 2, 3)
	for _, c := range cs[:2] {
		if err := c.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res := make(chan error, 1)
	go func() { res <- cs[2].Lock(ctx) }()
	waitQueued(t, ctx, path, 3)
	if err := admin.Delete(cs[0].Node(), -1); err != nil {
		t.Fatal(err)
	}
	locktest.RequireClosedWithin(t, cs[0].Done(), 5*time.Second, "the holder whose node was deleted")
	if err := <-res; err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	if err := cs[0].Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Unlock of the lost permit = %v; want ErrLockLost", err)
	}
	for _, c := range cs[1:] {
		if err := c.Unlock(ctx); err != nil {
			t.Error(err)
		}
	}
}

// The first waiter's session expires while it is between two listings of
// the queue (its watched listing was lost with the connection, and the
// client could not reconnect until the servers had expired the session).
// Its next listing runs on the new session and misses its node: Lock
// must name that the session's end, as every other step of the wait
// does, not a deletion.
func TestFirstWaiterExpiredBetweenListingsIsTheSessionsEnd(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	holders := contenders(t, path, 2, 2)
	for _, h := range holders {
		if err := h.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w := zktest.NewWire(t)
	var once sync.Once
	lost := make(chan struct{})
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		if r.Path != path || !r.Watch || (r.Op != zktest.OpGetChildren && r.Op != zktest.OpGetChildren2) {
			return zktest.Pass
		}
		verdict := zktest.Pass
		once.Do(func() { // the first waiter's watched listing: lost, and no way back yet
			w.HoldDials()
			verdict = zktest.Break
			close(lost)
		})
		return verdict
	})
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(locktest.ExpirySessionTimeout))
	waiter, err := semaphore.New(zktest.Session(t, conn), path, 2)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() { res <- waiter.Lock(ctx) }()
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("premise: the waiter never set its watch on the queue")
	}
	node := waiter.Node()
	for { // the servers expire the session, and its node with it
		ok, _, err := admin.Exists(node)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("premise: %s outlived its session's timeout with the dials held", node)
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.ReleaseDials()
	err = <-res
	if !errors.Is(err, zklocks.ErrLockLost) || !errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("the first waiter: Lock after its session expired between listings = %v; want %v wrapping %v", err, zklocks.ErrLockLost, zk.ErrSessionExpired)
	}
	t.Logf("the first waiter: %v", err)
	for _, h := range holders {
		if err := h.Unlock(ctx); err != nil {
			t.Error(err)
		}
	}
}
