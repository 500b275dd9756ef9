package locktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testNoGoroutineLeak: once the connections are closed, no goroutine
// started by the lock is left, whether the last call was an Unlock or a
// failed Lock. zktest.VerifyNoLeaks checks after every cleanup of the
// subtest, the closing of its sessions included, so go-zookeeper's own
// goroutines must be gone too.
func (s *suite) testNoGoroutineLeak(t T) {
	for _, tc := range []struct {
		name string
		run  func(t T, ctx context.Context, path string)
	}{
		{"AfterUnlock", func(t T, ctx context.Context, path string) {
			a := s.newClient(t, path, 0)
			b := s.newClient(t, path, 0)
			mustLock(t, ctx, "a", a.l)
			res, _ := s.lockQueued(t, ctx, ctx, a.conn, path, b)
			mustUnlock(t, ctx, "a", a.l)
			if r := AwaitLock(t, res, 10*time.Second, "b"); r.Err != nil {
				t.Fatalf("b: Lock: %v", r.Err)
			}
			mustUnlock(t, ctx, "b", b.l)
			if err := a.l.TryLock(ctx); err != nil {
				t.Fatalf("a: TryLock: %v", err)
			}
			mustUnlock(t, ctx, "a", a.l)
		}},
		{"AfterCancelledLock", func(t T, ctx context.Context, path string) {
			a := s.newClient(t, path, 0)
			b := s.newClient(t, path, 0)
			mustLock(t, ctx, "a", a.l)
			bctx, cancel := context.WithCancel(ctx)
			res, _ := s.lockQueued(t, ctx, bctx, a.conn, path, b)
			cancel()
			if r := AwaitLock(t, res, 5*time.Second, "b"); !errors.Is(r.Err, context.Canceled) {
				t.Fatalf("b: Lock: %v, want %v", r.Err, context.Canceled)
			}
			s.requireNoNodes(t, a.conn, path, b, "b's cancelled Lock")
			mustUnlock(t, ctx, "a", a.l)
		}},
		{"AfterFailedTryLock", func(t T, ctx context.Context, path string) {
			a := s.newClient(t, path, 0)
			b := s.newClient(t, path, 0)
			mustLock(t, ctx, "a", a.l)
			if err := b.l.TryLock(ctx); !errors.Is(err, zklocks.ErrLocked) {
				t.Fatalf("b: TryLock: %v, want %v", err, zklocks.ErrLocked)
			}
			mustUnlock(t, ctx, "a", a.l)
		}},
		{"AfterLockOnClosedConn", func(t T, ctx context.Context, path string) {
			c := s.newClient(t, path, 0)
			c.conn.Close()
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := c.l.Lock(lctx); err == nil {
				t.Fatal("Lock on a closed connection succeeded")
			}
		}},
		{"AfterLoss", func(t T, ctx context.Context, path string) {
			c := s.newClient(t, path, 0)
			mustLock(t, ctx, "c", c.l)
			for _, n := range s.requireNodes(t, c.conn, path, c.sid, "c's node") {
				if err := c.conn.Delete(n, -1); err != nil {
					t.Fatalf("delete %s: %v", n, err)
				}
			}
			RequireClosedWithin(t, c.l.Done(), SessionTimeout+lossSlack, "after the node was deleted")
			if err := c.l.Unlock(ctx); !errors.Is(err, zklocks.ErrLockLost) {
				t.Fatalf("Unlock after the loss: %v, want %v", err, zklocks.ErrLockLost)
			}
		}},
	} {
		t.Run(tc.name, func(t T) {
			zktest.Servers(t) // start the shared ensemble (if needed) before the snapshot
			zktest.VerifyNoLeaks(t)
			ctx := testContext(t, 20*time.Second)
			tc.run(t, ctx, zktest.LockPath(t))
		})
	}
}

// testStats: a lock that counts its traffic counts the requests of a Lock,
// and the watch notification that woke a waiter.
func (s *suite) testStats(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)
	sa, ok := a.l.(Stater)
	if !ok {
		t.Skipf("%s has no Stats method", s.v.Name)
	}
	sb := b.l.(Stater)
	mustLock(t, ctx, "a", a.l)
	if st := sa.Stats(); st.Requests <= 0 {
		t.Errorf("a: Stats() = %+v after Lock, want Requests > 0", st)
	}
	res, _ := s.lockQueued(t, ctx, ctx, a.conn, path, b)
	// Queued is not yet watching: a release between b's create and b's
	// watch lets b take the lock without any notification. Wait until a
	// server lists a watch of b's session on a's node.
	held, err := s.nodesOf(a.conn, path, a.sid)
	if err != nil || len(held) != 1 {
		t.Fatalf("a's node: %v %v", held, err)
	}
	s.waitWatch(t, ctx, b.sid, held[0])
	mustUnlock(t, ctx, "a", a.l)
	if r := AwaitLock(t, res, 10*time.Second, "b"); r.Err != nil {
		t.Fatalf("b: Lock: %v", r.Err)
	}
	if st := sb.Stats(); st.Requests <= 0 || st.Notifications <= 0 {
		t.Errorf("b: Stats() = %+v after waiting for a's release, want Requests > 0 and Notifications > 0", st)
	}
	mustUnlock(t, ctx, "b", b.l)
	t.Logf("a: %+v, b: %+v", sa.Stats(), sb.Stats())
}

// waitWatch waits until some member of the ensemble reports (4lw wchc) a
// watch of session sid on node.
func (s *suite) waitWatch(t T, ctx context.Context, sid int64, node string) {
	t.Helper()
	session := fmt.Sprintf("0x%x", sid)
	err := poll(ctx, func() (bool, error) {
		for _, addr := range zktest.Servers(t) {
			out, err := ensemble.FourLetter(addr, "wchc")
			if err != nil {
				continue // a member down, or 4lw not allowed there
			}
			if watches(out, session, node) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("session %s never watched %s (4lw wchc must be whitelisted): %v", session, node, err)
	}
}

// watches reports whether wchc output lists a watch of session on node:
// the output is each session id on a line of its own, followed by its
// watched paths, indented.
func watches(wchc, session, node string) bool {
	in := false
	for _, line := range strings.Split(wchc, "\n") {
		switch {
		case !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, " "):
			in = strings.TrimSpace(line) == session
		case in && strings.TrimSpace(line) == node:
			return true
		}
	}
	return false
}
