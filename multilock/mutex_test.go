package multilock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/multilock"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
)

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// accounts returns the lock paths of two accounts under a fresh root.
func accounts(t *testing.T) (a, b string) {
	root := zktest.LockPath(t)
	return root + "/account-1", root + "/account-2"
}

func newMutex(t *testing.T, conn *zk.Conn, paths ...string) *multilock.Mutex {
	t.Helper()
	m, err := multilock.New(zktest.Session(t, conn), paths)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newSequential(t *testing.T, conn *zk.Conn, path string) *sequential.Mutex {
	t.Helper()
	m, err := sequential.New(zktest.Session(t, conn), path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// nodesOf lists, per path, the queue nodes of session sid, after a sync.
func nodesOf(t *testing.T, conn *zk.Conn, sid int64, paths ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, p := range paths {
		if _, err := conn.Sync(p); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
		cs, err := sequential.Contenders(context.Background(), zktest.Session(t, conn), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Stat.EphemeralOwner == sid {
				out[p] = append(out[p], c.Node)
			}
		}
	}
	return out
}

// New checks its input and sends nothing: each bad input fails with its
// sentinel and returns no Mutex.
func TestNewRejectsBadInput(t *testing.T) {
	conn := zktest.Connect(t)
	s := zktest.Session(t, conn)
	a, b := accounts(t)
	cases := []struct {
		name  string
		s     *zklocks.Session
		paths []string
		opts  []zklocks.Option
		want  error
	}{
		{"NilSession", nil, []string{a}, nil, zklocks.ErrNilSession},
		{"NoPaths", s, nil, nil, zklocks.ErrBadPath},
		{"RelativePath", s, []string{a, "locks/x"}, nil, zklocks.ErrBadPath},
		{"TrailingSlash", s, []string{a + "/"}, nil, zklocks.ErrBadPath},
		{"ListedTwice", s, []string{b, a, b}, nil, zklocks.ErrBadPath},
		{"AnotherVariantsOption", s, []string{a, b}, []zklocks.Option{reentrant.WithCountMode(reentrant.InNode)}, zklocks.ErrBadOption},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := multilock.New(c.s, c.paths, c.opts...)
			if !errors.Is(err, c.want) || m != nil {
				t.Fatalf("New = %v, %v; want nil and an error wrapping %v", m, err, c.want)
			}
		})
	}
}

// Lock holds every lock of the set, each with a node of our session and
// its own token; Unlock removes every node. The paths come back sorted.
func TestLockHoldsEveryLockOfTheSet(t *testing.T) {
	ctx := testContext(t, 20*time.Second)
	conn := zktest.Connect(t)
	a, b := accounts(t)
	m := newMutex(t, conn, b, a)
	if got := m.Paths(); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("Paths() = %v; want %v", got, []string{a, b})
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := nodesOf(t, conn, conn.SessionID(), a, b)
	for _, p := range []string{a, b} {
		if len(held[p]) != 1 {
			t.Errorf("%s: nodes of our session %v; want one", p, held[p])
			continue
		}
		_, stat, err := conn.Get(held[p][0])
		if err != nil || stat.Czxid != m.Token(p) {
			t.Errorf("%s: Token = %d, node's czxid %v (%v)", p, m.Token(p), stat, err)
		}
	}
	if m.Token(a) == m.Token(b) || m.Token("/not/in/the/set") != 0 {
		t.Errorf("tokens: %d and %d, of a path outside the set %d; want two different ones and 0", m.Token(a), m.Token(b), m.Token("/not/in/the/set"))
	}
	if err := m.Lock(ctx); !errors.Is(err, zklocks.ErrAlreadyLocked) {
		t.Errorf("second Lock = %v; want ErrAlreadyLocked", err)
	}
	done := m.Done() // taken while the set is held: the channel Unlock must close
	if locktest.IsClosed(done) {
		t.Fatal("Done closed while the set is held")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !locktest.IsClosed(done) {
		t.Error("the hold's Done() still open after Unlock returned")
	}
	if !locktest.IsClosed(m.Done()) {
		t.Error("Done() after Unlock is open, want a closed channel")
	}
	if left := nodesOf(t, conn, conn.SessionID(), a, b); len(left) != 0 {
		t.Errorf("nodes left after Unlock: %v", left)
	}
	if err := m.Unlock(ctx); !errors.Is(err, zklocks.ErrNotLocked) {
		t.Errorf("Unlock of a released set = %v; want ErrNotLocked", err)
	}
	if m.Token(a) != 0 {
		t.Errorf("Token after Unlock = %d; want 0", m.Token(a))
	}
}

// The deadlock this package exists for. Two clients lock the same two
// accounts, one listing {A, B} and the other {B, A}. Taken in the order
// each lists them, with both first locks taken before either second one,
// each waits for the other forever (here: until a deadline). Taken by a
// multilock Mutex, the same two orders complete, round after round.
func TestOppositeOrders(t *testing.T) {
	a, b := accounts(t)
	connX, connY := zktest.Connect(t), zktest.Connect(t)

	t.Run("InTheOrderListedDeadlock", func(t *testing.T) {
		ctx := testContext(t, 20*time.Second)
		xa, xb := newSequential(t, connX, a), newSequential(t, connX, b)
		yb, ya := newSequential(t, connY, b), newSequential(t, connY, a)
		if err := xa.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := yb.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		wait, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		errs := make(chan error, 2)
		go func() { errs <- xb.Lock(wait) }()
		go func() { errs <- ya.Lock(wait) }()
		for range 2 {
			if err := <-errs; !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("second Lock = %v; want both to wait until the deadline", err)
			}
		}
		for _, l := range []*sequential.Mutex{xa, yb} {
			if err := l.Unlock(ctx); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("InPathOrderComplete", func(t *testing.T) {
		ctx := testContext(t, 60*time.Second)
		x, y := newMutex(t, connX, a, b), newMutex(t, connY, b, a)
		const rounds = 20
		errs := make(chan error, 2)
		for _, m := range []*multilock.Mutex{x, y} {
			go func() {
				for range rounds {
					if err := m.Lock(ctx); err != nil {
						errs <- err
						return
					}
					if err := m.Unlock(ctx); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("a client stopped: %v", err)
			}
		}
	})
}

// A Lock that fails part-way holds nothing afterwards: the locks it took
// are released before it returns, whatever ended it.
func TestFailedLockGivesBackWhatItTook(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	a, b := accounts(t)
	other, conn := zktest.Connect(t), zktest.Connect(t)
	ctx := testContext(t, 30*time.Second)
	holder := newSequential(t, other, b) // b, the second lock in path order, is taken
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(ctx)

	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 500*time.Millisecond) }
	cases := []struct {
		name string
		try  func(m *multilock.Mutex) error
		want error
	}{
		{"TryLockFindsOneTaken", func(m *multilock.Mutex) error { return m.TryLock(ctx) }, zklocks.ErrLocked},
		{"LockDeadline", func(m *multilock.Mutex) error {
			c, cancel := short()
			defer cancel()
			return m.Lock(c)
		}, context.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMutex(t, conn, a, b)
			if err := c.try(m); !errors.Is(err, c.want) {
				t.Fatalf("got %v; want an error wrapping %v", err, c.want)
			}
			if left := nodesOf(t, other, conn.SessionID(), a, b); len(left) != 0 {
				t.Errorf("nodes of the failed Lock's session: %v; want none", left)
			}
			if err := m.Unlock(ctx); !errors.Is(err, zklocks.ErrNotLocked) {
				t.Errorf("Unlock after the failed Lock = %v; want ErrNotLocked", err)
			}
			// The Mutex is free for the next Lock, which waits like any.
			if err := m.TryLock(ctx); !errors.Is(err, zklocks.ErrLocked) {
				t.Errorf("next TryLock = %v; want ErrLocked again", err)
			}
		})
	}
}

// One lock of a held set is lost (its node deleted by an operator): the
// set's Done closes, Err names the path, and Unlock reports the loss and
// releases the lock that was still held.
func TestLossOfOneLockEndsTheSet(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	ctx := testContext(t, 30*time.Second)
	a, b := accounts(t)
	conn, admin := zktest.Connect(t), zktest.Connect(t)
	m := newMutex(t, conn, a, b)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodesOf(t, admin, conn.SessionID(), b)[b]
	if len(node) != 1 {
		t.Fatalf("our nodes on %s: %v", b, node)
	}
	if err := admin.Delete(node[0], -1); err != nil {
		t.Fatal(err)
	}
	locktest.RequireClosedWithin(t, m.Done(), 5*time.Second, "the set, one of whose nodes was deleted")
	if err := m.Err(); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Err() = %v; want ErrLockLost", err)
	}
	err := m.Unlock(ctx)
	if !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Unlock = %v; want ErrLockLost", err)
	}
	if left := nodesOf(t, admin, conn.SessionID(), a, b); len(left) != 0 {
		t.Errorf("nodes left after the Unlock of a lost set: %v", left)
	}
	if err := m.Err(); !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("Err() after Unlock = %v; want the loss it reported", err)
	}
}

// A lock taken early is lost while Lock waits for a later one: the wait
// ends with ErrLockLost at once, not at ctx's deadline, and nothing of the
// attempt is left.
func TestLossWhileWaitingEndsLock(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	ctx := testContext(t, 30*time.Second)
	a, b := accounts(t)
	conn, other := zktest.Connect(t), zktest.Connect(t)
	holder := newSequential(t, other, b)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(ctx)
	m := newMutex(t, conn, a, b)
	res := make(chan error, 1)
	go func() { res <- m.Lock(ctx) }()

	// Once our node on b waits behind the holder, delete our node on a.
	var ourA []string
	for len(ourA) == 0 || len(nodesOf(t, other, conn.SessionID(), b)[b]) == 0 {
		select {
		case err := <-res:
			t.Fatalf("Lock returned %v while b was held", err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		ourA = nodesOf(t, other, conn.SessionID(), a)[a]
	}
	if err := other.Delete(ourA[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, zklocks.ErrLockLost) || errors.Is(err, context.Canceled) {
			t.Errorf("Lock = %v; want ErrLockLost (and not context.Canceled)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock still waiting 10s after the lock it had taken was lost")
	}
	if left := nodesOf(t, other, conn.SessionID(), a, b); len(left) != 0 {
		t.Errorf("nodes left by the failed Lock: %v", left)
	}
}
