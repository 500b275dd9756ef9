package locktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testTryLock: TryLock fails with Locked at once while another session
// holds the lock, leaves nothing behind, and succeeds once the lock is free.
func (s *suite) testTryLock(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)

	if err := a.l.TryLock(ctx); err != nil {
		t.Fatalf("a: TryLock on a free lock: %v", err)
	}
	tokenA := a.l.Token()
	// ctx has seconds left: a TryLock that waited for a's hold would end
	// with the ctx error instead of Locked.
	err := b.l.TryLock(ctx)
	if !errors.Is(err, zklocks.ErrLocked) {
		t.Fatalf("b: TryLock while a holds: %v, want %v", err, zklocks.ErrLocked)
	}
	if tok := b.l.Token(); tok != 0 {
		t.Errorf("b: Token() = %d after a failed TryLock, want 0", tok)
	}
	if !IsClosed(b.l.Done()) {
		t.Errorf("b: Done() open after a failed TryLock, want closed")
	}
	s.requireNoNodes(t, a.conn, path, b, "a failed TryLock")
	s.requireNodes(t, a.conn, path, a.sid, "a's hold after b's TryLock")

	mustUnlock(t, ctx, "a", a.l)
	if err := b.l.TryLock(ctx); err != nil {
		t.Fatalf("b: TryLock after a's Unlock: %v", err)
	}
	if tokenB := b.l.Token(); tokenB <= tokenA {
		t.Errorf("b's token %d is not larger than a's earlier token %d", tokenB, tokenA)
	}
	mustUnlock(t, ctx, "b", b.l)
	s.requireNoNodes(t, a.conn, path, b, "b's Unlock")
}

// testCancel: a Lock whose ctx ends returns the ctx error and leaves
// nothing of its client behind, wherever the end catches it.
func (s *suite) testCancel(t T) {
	t.Run("BeforeCreate", s.testCancelBeforeCreate)
	t.Run("WhileWaiting", s.testCancelWhileWaiting)
	t.Run("RacingAcquisition", s.testCancelRacingAcquisition)
}

func (s *suite) testCancelBeforeCreate(t T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"Canceled", canceled, context.Canceled},
		{"DeadlinePassed", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t T) {
			path := zktest.LockPath(t)
			c := s.newClient(t, path, 0)
			for _, call := range []struct {
				name string
				fn   func(context.Context) error
			}{{"Lock", c.l.Lock}, {"TryLock", c.l.TryLock}} {
				if err := call.fn(tc.ctx); !errors.Is(err, tc.want) {
					t.Errorf("%s: %v, want %v", call.name, err, tc.want)
				}
			}
			if ok, _, err := c.conn.Exists(path); err != nil || ok {
				t.Errorf("lock path %s exists=%v (%v) after a Lock whose ctx was already done; want nothing created", path, ok, err)
			}
			if tok := c.l.Token(); tok != 0 {
				t.Errorf("Token() = %d, want 0", tok)
			}
		})
	}
}

func (s *suite) testCancelWhileWaiting(t T) {
	for _, tc := range []struct {
		name string
		// start returns the ctx for b's Lock and, when the test must end
		// it, the cancel to call once b is queued.
		start func(parent context.Context) (context.Context, context.CancelFunc, bool)
		want  error
	}{
		{"Cancel", func(p context.Context) (context.Context, context.CancelFunc, bool) {
			ctx, cancel := context.WithCancel(p)
			return ctx, cancel, true
		}, context.Canceled},
		{"Deadline", func(p context.Context) (context.Context, context.CancelFunc, bool) {
			ctx, cancel := context.WithTimeout(p, 500*time.Millisecond)
			return ctx, cancel, false
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t T) {
			ctx := testContext(t, 20*time.Second)
			path := zktest.LockPath(t)
			a := s.newClient(t, path, 0)
			b := s.newClient(t, path, 0)
			mustLock(t, ctx, "a", a.l)

			bctx, cancel, cancelByHand := tc.start(ctx)
			defer cancel()
			var res <-chan LockResult
			if cancelByHand {
				var queued bool
				res, queued = s.lockQueued(t, ctx, bctx, a.conn, path, b)
				if !queued {
					t.Log("queueing not observable; cancelling without knowing b waits")
				}
				cancel()
			} else {
				// The deadline ends the wait on its own; waiting here to see b
				// queued could outlast it on a slow machine.
				res = LockAsync(bctx, b.l)
			}
			r := AwaitLock(t, res, 5*time.Second, "b")
			if !errors.Is(r.Err, tc.want) {
				t.Fatalf("b: Lock: %v, want %v", r.Err, tc.want)
			}
			s.requireNoNodes(t, a.conn, path, b, "b's ctx ended while it waited")
			if IsClosed(a.l.Done()) {
				t.Fatal("a: Done() closed: b's cancelled Lock disturbed a's hold")
			}
			s.requireNodes(t, a.conn, path, a.sid, "a's hold after b gave up")

			// b's Mutex is reusable after the failed Lock.
			mustUnlock(t, ctx, "a", a.l)
			mustLock(t, ctx, "b (again)", b.l)
			mustUnlock(t, ctx, "b (again)", b.l)
			s.requireNoNodes(t, a.conn, path, b, "b's Unlock")
		})
	}
}

// testCancelRacingAcquisition fires b's cancel at random moments around
// the handoff from a to b. Either outcome is fine as long as it is
// consistent: the ctx error and nothing of b left, or success and b holds.
func (s *suite) testCancelRacingAcquisition(t T) {
	const iterations = 30
	ctx := testContext(t, 45*time.Second)
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)

	handoff := func(cancelAfter time.Duration) (LockResult, time.Time) {
		actx, acancel := context.WithTimeout(ctx, SessionTimeout+5*time.Second)
		defer acancel()
		if err := a.l.Lock(actx); err != nil {
			t.Fatalf("a: Lock: %v (is something of b's earlier attempt left behind?)", err)
		}
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		res, _ := s.lockQueued(t, ctx, bctx, a.conn, path, b)
		if cancelAfter >= 0 {
			timer := time.AfterFunc(cancelAfter, cancel)
			defer timer.Stop()
		}
		unlockAt := time.Now()
		mustUnlock(t, ctx, "a", a.l)
		return AwaitLock(t, res, 10*time.Second, "b"), unlockAt
	}
	// Plain handoffs first, to learn how long one takes here (the median
	// of three: the first one on a cold ensemble can be slow).
	var took []time.Duration
	for range 3 {
		r, unlockAt := handoff(-1)
		if r.Err != nil {
			t.Fatalf("b: Lock in a plain handoff: %v", r.Err)
		}
		took = append(took, r.At.Sub(unlockAt))
		mustUnlock(t, ctx, "b", b.l)
	}
	slices.Sort(took)
	window := 2 * took[1]

	var won, cancelled int
	for i := range iterations {
		delay := time.Duration(rand.Int64N(int64(window) + 1))
		r, _ := handoff(delay)
		switch {
		case r.Err == nil:
			won++
			if IsClosed(b.l.Done()) {
				t.Fatalf("iteration %d (cancel after %v): Lock succeeded but Done() is closed", i, delay)
			}
			if b.l.Token() <= 0 {
				t.Fatalf("iteration %d: Lock succeeded but Token() = %d", i, b.l.Token())
			}
			s.requireNodes(t, a.conn, path, b.sid, fmt.Sprintf("iteration %d (cancel after %v, b's session now %#x): b's hold after a successful Lock",
				i, delay, b.conn.SessionID()))
			mustUnlock(t, ctx, "b", b.l)
		case errors.Is(r.Err, context.Canceled):
			cancelled++
			if tok := b.l.Token(); tok != 0 {
				t.Fatalf("iteration %d: Lock failed but Token() = %d", i, tok)
			}
		default:
			t.Fatalf("iteration %d (cancel after %v): b: Lock: %v, want nil or %v", i, delay, r.Err, context.Canceled)
		}
		s.requireNoNodes(t, a.conn, path, b, "the race between b's cancel and the handoff")
	}
	t.Logf("%d iterations, cancel within %v of a's Unlock: b won %d, b cancelled %d", iterations, window, won, cancelled)
}

// zkConnectionError reports whether err says the client has no usable
// connection (what a Lock on a closed conn should say).
func zkConnectionError(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrNoServer) || errors.Is(err, zk.ErrSessionExpired)
}
