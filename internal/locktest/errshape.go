package locktest

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// lockPackages are the prefixes an error of one lock may carry: its own,
// once, and no other (internal packages included: a user never imports
// them).
var lockPackages = []string{"naive", "sequential", "reentrant", "timeout", "semaphore", "election", "hold", "zkop", "lockerr"}

// testErrorShape: every error of the API reads the same in every variant,
// "<package>: <operation> <path>: <what went wrong>", names the package
// once, and errors.Is finds the variant's sentinel or ctx's error in it.
func (s *suite) testErrorShape(t T) {
	ctx := testContext(t, 30*time.Second)
	pkg, _, _ := strings.Cut(s.v.Name, "/")
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	type call struct {
		name, op, path string
		err            func() error
		want           error
	}
	calls := []call{
		{"NewNilSession", "new", path, func() error { _, err := s.v.New(nil, path); return err }, zklocks.ErrNilSession},
		{"NewBadPath", "new", "locks/orders", func() error { _, err := s.v.New(zktest.Session(t, a.conn), "locks/orders"); return err }, zklocks.ErrBadPath},
		{"UnlockNotHeld", "unlock", path, func() error { return a.l.Unlock(ctx) }, zklocks.ErrNotLocked},
		{"LockCancelled", "lock", path, func() error { return a.l.Lock(cancelled) }, context.Canceled},
		{"TryLockCancelled", "trylock", path, func() error { return a.l.TryLock(cancelled) }, context.Canceled},
		{"TryLockLocked", "trylock", path, func() error {
			mustLock(t, ctx, "a", a.l)
			return b.l.TryLock(ctx)
		}, zklocks.ErrLocked},
		{"LockDeadline", "lock", path, func() error {
			dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			return b.l.Lock(dctx)
		}, context.DeadlineExceeded},
	}
	if !s.v.Reentrant {
		calls = append(calls, call{"LockAlreadyLocked", "lock", path, func() error { return a.l.Lock(ctx) }, zklocks.ErrAlreadyLocked})
	}
	calls = append(calls, call{"UnlockLost", "unlock", path, func() error {
		nodes, err := s.nodesOf(b.conn, path, a.sid)
		if err != nil || len(nodes) != 1 {
			t.Fatalf("a's nodes: %v, %v; want one", nodes, err)
		}
		if err := b.conn.Delete(nodes[0], -1); err != nil {
			t.Fatalf("delete a's node: %v", err)
		}
		RequireClosedWithin(t, a.l.Done(), a.timeout+time.Second, "a, whose node was deleted")
		return a.l.Unlock(ctx)
	}, zklocks.ErrLockLost})

	for _, c := range calls {
		t.Run(c.name, func(t T) {
			err := c.err()
			if err == nil {
				t.Fatalf("no error; want one that is %v", c.want)
			}
			msg := err.Error()
			if prefix := pkg + ": " + c.op + " " + c.path + ": "; !strings.HasPrefix(msg, prefix) {
				t.Errorf("error %q; want it to start with %q", msg, prefix)
			}
			for _, p := range lockPackages {
				want := 0
				if p == pkg {
					want = 1
				}
				if n := strings.Count(msg, p+": "); n != want {
					t.Errorf("error %q names %q %d times; want %d", msg, p+":", n, want)
				}
			}
			if !errors.Is(err, c.want) {
				t.Errorf("error %q is not %v", msg, c.want)
			}
		})
	}
}
