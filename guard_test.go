package zklocks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/rwlock"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

// SetIfHeld takes only the locks whose node name is their own. naive's
// node is the lock path, which the next holder's node shares: a check of
// it would pass for the next holder too, so naive must not be a
// NodeHolder (it has no Node method, although it runs on the same core).
func TestNodeHoldersAreTheLocksWithUniqueNodes(t *testing.T) {
	cases := []struct {
		lock any
		want bool
	}{
		{(*naive.Mutex)(nil), false},
		{(*sequential.Mutex)(nil), true},
		{(*timeout.Mutex)(nil), true},
		{(*rwlock.Mutex)(nil), false}, // its two sides are; the lock as a whole is neither
	}
	for _, c := range cases {
		if _, ok := c.lock.(zklocks.NodeHolder); ok != c.want {
			t.Errorf("%T is a NodeHolder: %v; want %v", c.lock, ok, c.want)
		}
	}
}

// SetIfHeld is the store's own fence: while the holder's node exists its
// writes go through; once the node is gone (deleted here, as an operator
// or an expired session would), the servers refuse them, whatever the
// holder believes, and the next holder's writes go through.
func TestSetIfHeldRefusesTheWriteOfALostHold(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, admin, path, a, state := holdBesideState(t, ctx)
	if _, err := zklocks.SetIfHeld(ctx, s, a, state, []byte("a1"), -1); err != nil {
		t.Fatalf("a's write while it holds: %v", err)
	}
	if err := admin.Delete(a.Node(), -1); err != nil {
		t.Fatal(err)
	}
	_, err := zklocks.SetIfHeld(ctx, s, a, state, []byte("a2"), -1)
	if !errors.Is(err, zklocks.ErrLockLost) || !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("a's write after its node went: %v; want ErrLockLost wrapping zk.ErrNoNode", err)
	}
	if data, _, err := admin.Get(state); err != nil || string(data) != "a1" {
		t.Fatalf("state after the refused write: %q (%v); want a's first write alone", data, err)
	}

	b, err := sequential.New(connect(t, 10*time.Second), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := zklocks.SetIfHeld(ctx, s, b, state, []byte("b1"), -1); err != nil {
		t.Fatalf("b's write while it holds: %v", err)
	}
	_ = a.Unlock(ctx) // reports the loss
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Every refusal but the fence's own says what was wrong, and none of them
// writes.
func TestSetIfHeldErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, admin, path, held, state := holdBesideState(t, ctx)
	defer func() { _ = held.Unlock(ctx) }()
	idle, err := sequential.New(s, path+"-idle")
	if err != nil {
		t.Fatal(err)
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()

	for _, tc := range []struct {
		name    string
		ctx     context.Context
		s       *zklocks.Session
		h       zklocks.NodeHolder
		path    string
		version int32
		want    error
	}{
		{"NilSession", ctx, nil, held, state, -1, zklocks.ErrNilSession},
		{"NilHolder", ctx, s, nil, state, -1, zklocks.ErrNotLocked},
		{"NotHeld", ctx, s, idle, state, -1, zklocks.ErrNotLocked},
		{"BadPath", ctx, s, held, "relative/path", -1, zklocks.ErrBadPath},
		{"NoSuchNode", ctx, s, held, state + "-missing", -1, zk.ErrNoNode},
		{"WrongVersion", ctx, s, held, state, 7, zk.ErrBadVersion},
		{"ContextDone", cancelled, s, held, state, -1, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zklocks.SetIfHeld(tc.ctx, tc.s, tc.h, tc.path, []byte("x"), tc.version)
			if !errors.Is(err, tc.want) {
				t.Fatalf("SetIfHeld: %v; want %v", err, tc.want)
			}
			if errors.Is(err, zklocks.ErrLockLost) {
				t.Fatalf("SetIfHeld: %v: a refusal that is not the fence's must not say the lock is lost", err)
			}
		})
	}
	if data, _, err := admin.Get(state); err != nil || string(data) != "v0" {
		t.Fatalf("state after the refusals: %q (%v); want it untouched", data, err)
	}
}

// holdBesideState takes a sequential lock on a session of its own and
// makes the node it guards, path+"-state" holding "v0", beside it.
func holdBesideState(t *testing.T, ctx context.Context) (*zklocks.Session, *zk.Conn, string, *sequential.Mutex, string) {
	t.Helper()
	s := connect(t, 10*time.Second)
	admin := zktest.Connect(t)
	path := zktest.LockPath(t)
	m, err := sequential.New(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil { // makes the parents
		t.Fatal(err)
	}
	state := path + "-state"
	if _, err := admin.Create(state, []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(state, -1) })
	return s, admin, path, m, state
}
