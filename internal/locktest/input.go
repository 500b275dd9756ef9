package locktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
)

// testBadInput: New refuses bad paths, a nil session and an option of
// another variant with the module's sentinels, never panics, and sends
// nothing to ZooKeeper.
func (s *suite) testBadInput(t T) {
	admin := zktest.Connect(t)
	session := zktest.Session(t, admin)
	base := zktest.LockPath(t) // never created: every case below lives under it or elsewhere
	reservedBefore := zktest.Children(t, admin, "/zookeeper")

	for _, tc := range []struct{ name, path string }{
		{"Empty", ""},
		{"Relative", "locks/orders"},
		{"Root", "/"},
		{"TrailingSlash", base + "/"},
		{"DoubleSlash", base + "//x"},
		{"DotSegment", base + "/./x"},
		{"DotDotSegment", base + "/../x"},
		{"DotLast", base + "/."},
		{"NUL", base + "/a\x00b"},
		{"ControlChar", base + "/a\x01b"},
		{"DEL", base + "/a\x7fb"},
		{"PrivateUse", base + "/a\ue000b"},
		{"Specials", base + "/a\ufff5b"},
		{"InvalidUTF8", base + "/a\xffb"},
		{"Reserved", "/zookeeper"},
		{"ReservedChild", "/zookeeper/quota"},
		{"ReservedDeep", "/zookeeper/a/b"},
	} {
		t.Run(tc.name, func(t T) {
			l, err := s.v.New(session, tc.path)
			if !errors.Is(err, zklocks.ErrBadPath) {
				t.Errorf("New(s, %q) = %v, %v; want %v", tc.path, l, err, zklocks.ErrBadPath)
			}
		})
	}
	t.Run("NilSession", func(t T) {
		if l, err := s.v.New(nil, base); !errors.Is(err, zklocks.ErrNilSession) {
			t.Errorf("New(nil, %q) = %v, %v; want %v", base, l, err, zklocks.ErrNilSession)
		}
	})
	t.Run("OptionOfAnotherVariant", func(t T) {
		l, err := s.v.New(session, base, foreignOption)
		if !errors.Is(err, zklocks.ErrBadOption) || !strings.Contains(err.Error(), foreignOptionName) {
			t.Errorf("New(s, %q, %s) = %v, %v; want %v naming the option", base, foreignOptionName, l, err, zklocks.ErrBadOption)
		}
	})
	t.Run("ZeroOptionIgnored", func(t T) {
		if _, err := s.v.New(session, base, zklocks.Option{}); err != nil {
			t.Errorf("New(s, %q, zklocks.Option{}) = %v, want nil", base, err)
		}
	})
	t.Run("GoodPathsAccepted", func(t T) {
		for _, p := range []string{base, base + "/a.b/..c/-x_", "/zookeeperx", "/zookeeper-locks/a"} {
			if _, err := s.v.New(session, p); err != nil {
				t.Errorf("New(s, %q) = %v, want nil", p, err)
			}
		}
	})

	for _, p := range []string{base, "/zookeeperx", "/zookeeper-locks"} {
		if err := syncPath(admin, p); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := admin.Exists(p); err != nil || ok {
			t.Errorf("New created %s (exists=%v, %v); it must not send anything to ZooKeeper", p, ok, err)
		}
	}
	if after := zktest.Children(t, admin, "/zookeeper"); !slices.Equal(after, reservedBefore) {
		t.Errorf("children of /zookeeper changed from %v to %v", reservedBefore, after)
	}
}

// testNotLocked: Unlock without a hold fails with NotLocked: never locked,
// twice in a row, after a failed TryLock, and by another client while the
// lock is held (whose node must survive it).
func (s *suite) testNotLocked(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)
	want := zklocks.ErrNotLocked

	if err := a.l.Unlock(ctx); !errors.Is(err, want) {
		t.Errorf("Unlock without Lock: %v, want %v", err, want)
	}
	mustLock(t, ctx, "a", a.l)
	if err := b.l.Unlock(ctx); !errors.Is(err, want) {
		t.Errorf("Unlock by a non-owner while a holds: %v, want %v", err, want)
	}
	if err := b.l.TryLock(ctx); !errors.Is(err, zklocks.ErrLocked) {
		t.Fatalf("b: TryLock while a holds: %v, want %v", err, zklocks.ErrLocked)
	}
	if err := b.l.Unlock(ctx); !errors.Is(err, want) {
		t.Errorf("Unlock after a failed TryLock: %v, want %v", err, want)
	}
	if IsClosed(a.l.Done()) {
		t.Fatal("a: Done() closed after b's Unlock calls")
	}
	s.requireNodes(t, a.conn, path, a.sid, "a's hold after b's Unlock calls")
	mustUnlock(t, ctx, "a", a.l)
	if err := a.l.Unlock(ctx); !errors.Is(err, want) {
		t.Errorf("second Unlock: %v, want %v", err, want)
	}
}

// testClosedConn: every method on a closed connection returns promptly
// with a clear error, never panics and creates nothing.
func (s *suite) testClosedConn(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	admin := zktest.Connect(t)
	c := s.newClient(t, path, 0)
	c.conn.Close()
	// Closed, not closing: for a moment after Close go-zookeeper still
	// reports its session, and a request sent then races with its
	// shutdown, which go-zookeeper v1.0.4 does not always survive (see
	// zkop.Client.AwaitSession).
	zktest.WaitNoSession(t, c.conn)

	for _, call := range []struct {
		name string
		fn   func(context.Context) error
	}{{"Lock", c.l.Lock}, {"TryLock", c.l.TryLock}} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := call.fn(cctx)
		cancel()
		switch {
		case err == nil:
			t.Fatalf("%s on a closed connection succeeded", call.name)
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			t.Errorf("%s on a closed connection hung until its ctx ended (%v); want a prompt error", call.name, err)
		case !zkConnectionError(err):
			t.Errorf("%s on a closed connection: %v; want an error wrapping go-zookeeper's (errors.Is zk.ErrConnectionClosed or zk.ErrClosing)", call.name, err)
		default:
			t.Logf("%s on a closed connection: %v", call.name, err)
		}
	}
	if err := c.l.Unlock(ctx); !errors.Is(err, zklocks.ErrNotLocked) {
		t.Errorf("Unlock on a closed connection without a hold: %v, want %v", err, zklocks.ErrNotLocked)
	}
	if err := syncPath(admin, path); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := admin.Exists(path); err != nil || ok {
		t.Errorf("lock path %s exists=%v (%v) after calls on a closed connection; want nothing created", path, ok, err)
	}
}

// testAlreadyLocked: Lock and TryLock on a Mutex that holds the lock, or is
// still acquiring it, fail with AlreadyLocked and leave the hold alone. For
// a Reentrant variant the calls while holding are re-entries instead (see
// holderLocksAgain); the calls while acquiring fail all the same.
func (s *suite) testAlreadyLocked(t T) {
	ctx := testContext(t, 20*time.Second)
	path := zktest.LockPath(t)
	a := s.newClient(t, path, 0)
	b := s.newClient(t, path, 0)
	want := zklocks.ErrAlreadyLocked

	mustLock(t, ctx, "a", a.l)
	if s.v.Reentrant {
		s.holderLocksAgain(t, ctx, path, a)
		mustLock(t, ctx, "a (a new hold)", a.l)
	} else {
		token := a.l.Token()
		if err := a.l.Lock(ctx); !errors.Is(err, want) {
			t.Errorf("Lock while held: %v, want %v", err, want)
		}
		if err := a.l.TryLock(ctx); !errors.Is(err, want) {
			t.Errorf("TryLock while held: %v, want %v", err, want)
		}
		if IsClosed(a.l.Done()) || a.l.Token() != token {
			t.Fatalf("the hold changed after the refused calls: Done closed=%v, token %d -> %d",
				IsClosed(a.l.Done()), token, a.l.Token())
		}
	}

	// While acquiring: b's first Lock waits behind a's hold.
	res, queued := s.lockQueued(t, ctx, ctx, a.conn, path, b)
	if queued {
		if err := b.l.Lock(ctx); !errors.Is(err, want) {
			t.Errorf("second Lock while the first is waiting: %v, want %v", err, want)
		}
		if err := b.l.TryLock(ctx); !errors.Is(err, want) {
			t.Errorf("TryLock while a Lock is waiting: %v, want %v", err, want)
		}
	} else {
		t.Log("queueing can not be observed for this variant: the while-acquiring case is not checked")
	}
	mustUnlock(t, ctx, "a", a.l)
	if r := AwaitLock(t, res, 10*time.Second, "b"); r.Err != nil {
		t.Fatalf("b: the first Lock, after the refused calls: %v", r.Err)
	}
	mustUnlock(t, ctx, "b", b.l)
}

// holderLocksAgain checks re-entry by a, which holds the lock once: Lock
// and TryLock succeed at once, the hold keeps its token, its Done and its
// one node, each call owes one more Unlock, and only the last Unlock
// releases the node. a holds nothing when it returns.
func (s *suite) holderLocksAgain(t T, ctx context.Context, path string, a client) {
	t.Helper()
	token, done := a.l.Token(), a.l.Done()
	node := s.requireNodes(t, a.conn, path, a.sid, "a's hold")
	same := func(when string) {
		t.Helper()
		if tok := a.l.Token(); tok != token {
			t.Errorf("%s: Token() = %d, want the hold's %d", when, tok, token)
		}
		if IsClosed(done) || IsClosed(a.l.Done()) {
			t.Fatalf("%s: Done() closed; the hold must go on", when)
		}
		if now := s.requireNodes(t, a.conn, path, a.sid, when); !slices.Equal(now, node) {
			t.Errorf("%s: a's nodes are %v, want the hold's %v", when, now, node)
		}
	}
	if err := a.l.Lock(ctx); err != nil {
		t.Fatalf("Lock while held by the same contender: %v, want a re-entry", err)
	}
	same("after a re-entering Lock")
	if err := a.l.TryLock(ctx); err != nil {
		t.Fatalf("TryLock while held by the same contender: %v, want a re-entry", err)
	}
	same("after a re-entering TryLock")
	for i := range 2 {
		mustUnlock(t, ctx, "a (inner)", a.l)
		same(fmt.Sprintf("after inner Unlock %d of 2", i+1))
	}
	mustUnlock(t, ctx, "a (last)", a.l)
	if !IsClosed(done) {
		t.Error("Done() still open after the last Unlock")
	}
	if tok := a.l.Token(); tok != 0 {
		t.Errorf("Token() = %d after the last Unlock, want 0", tok)
	}
	s.requireNoNodes(t, a.conn, path, a, "the last Unlock")
	if err := a.l.Unlock(ctx); !errors.Is(err, zklocks.ErrNotLocked) {
		t.Errorf("Unlock after the last one: %v, want %v", err, zklocks.ErrNotLocked)
	}
}

// foreignOption is an option of no variant: every New must refuse it
// rather than ignore it.
var foreignOption = zklocks.VariantOption(foreignOptionName, true)

const foreignOptionName = "locktest.WithNothing"
