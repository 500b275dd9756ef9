package naive_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Two Mutexes on one connection exclude each other, and each knows its
// own node. A holds; while the client is between connections an operator
// deletes A's node, and B's create, queued meanwhile, runs on the same
// session before the client re-registers its watches. The server then
// reports the new node to A's watch as a data change, and the node has
// A's session as its owner: only its creation zxid tells that it is B's.
// A's Done must close.
func TestReplacedNodeOnSameSessionEndsHold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const st = 4 * time.Second
	w := zktest.NewWire(t)
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	admin := zktest.Connect(t)
	path := zktest.LockPath(t)
	a, b := newMutex(t, conn, path, st), newMutex(t, conn, path, st)
	if err := a.Lock(ctx); err != nil {
		t.Fatalf("A: Lock: %v", err)
	}

	w.HoldDials()
	w.BreakAll()
	zktest.WaitNoSession(t, conn)
	mustSync(t, admin, path)
	if err := admin.Delete(path, -1); err != nil {
		t.Fatalf("operator: delete A's node: %v", err)
	}
	var order []int32 // the requests of the next connection, up to its setWatches
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		if r.Conn == 2 && !slices.Contains(order, zktest.OpSetWatches) {
			order = append(order, r.Op)
		}
		return zktest.Pass
	})
	bLocked := make(chan error, 1)
	go func() { bLocked <- b.Lock(ctx) }()
	// B's create waits in go-zookeeper's queue meanwhile (a dial that does
	// not return is not a failed round, which would flush it). The order
	// check below tells whether it got there in time.
	time.Sleep(time.Second)
	w.ReleaseDials()
	if err := <-bLocked; err != nil {
		t.Fatalf("B: Lock after A's node was deleted: %v", err)
	}
	defer b.Unlock(ctx)
	if len(order) == 0 || (order[0] != zktest.OpCreate && order[0] != zktest.OpCreate2) {
		t.Fatalf("premise: the reconnection's first requests were %v; want B's create before the watches are set again", order)
	}

	locktest.RequireClosedWithin(t, a.Done(), 3*time.Second, "A, whose node was replaced by B's on the same session")
	err := a.Unlock(ctx)
	if !errors.Is(err, zklocks.ErrLockLost) {
		t.Errorf("A: Unlock after its node was replaced: %v, want ErrLockLost", err)
	}
	if err != nil && strings.Contains(err.Error(), "session expired") {
		t.Errorf("A: Unlock: %v; the session lives on: the reason is the node, replaced", err)
	}
	if ok, _, err := admin.Exists(path); err != nil || !ok {
		t.Errorf("A's Unlock must not delete B's node: exists=%v, %v", ok, err)
	}
}

// A create whose write fails with a network error (the connection broke
// as it was written) has an unknown outcome, like one whose answer was
// lost: Lock looks for its node once the client is back and goes on,
// rather than returning the raw error and leaving a node it may have made.
func TestCreateWriteErrorIsRetried(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := zktest.NewWire(t)
	failed := false
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		if !failed && (r.Op == zktest.OpCreate || r.Op == zktest.OpCreate2) {
			failed = true
			return zktest.FailWrite
		}
		return zktest.Pass
	})
	path := zktest.LockPath(t)
	m := newMutex(t, zktest.Connect(t, zktest.WithDialer(w.Dialer())), path, zktest.DefaultSessionTimeout)
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock after a create whose write failed: %v; want the lock", err)
	}
	if !failed {
		t.Fatal("no create was sent")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Errorf("Unlock: %v", err)
	}
}

// Two Mutexes on one connection, and an operator between A's create and
// A's first look at its node: A's create is answered, the operator
// deletes the node, B's create makes it again on the same session, and
// only then does A read it back. The node's owner is A's session, as it
// would be for A's own node; the stamp in its data is B's. A must not
// take it: both would hold.
func TestNodeReplacedBeforeTheClaimIsNotAdopted(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	const st = 4 * time.Second
	w := zktest.NewWire(t)
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	admin := zktest.Connect(t)
	path := zktest.LockPath(t)
	a, b := newMutex(t, conn, path, st), newMutex(t, conn, path, st)

	created, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if (r.Request.Op == zktest.OpCreate || r.Request.Op == zktest.OpCreate2) && r.Request.Path == path && r.Err == 0 {
			once.Do(func() { close(created); <-resume }) // A's answer waits: the operator and B act first
		}
		return zktest.Pass
	})
	aLocked := make(chan error, 1)
	go func() { aLocked <- a.Lock(ctx) }()
	select {
	case <-created:
	case <-ctx.Done():
		t.Fatal("A's create was never answered")
	}
	mustSync(t, admin, path)
	if err := admin.Delete(path, -1); err != nil {
		close(resume)
		t.Fatalf("operator: delete A's node: %v", err)
	}
	bLocked := make(chan error, 1)
	go func() { bLocked <- b.Lock(ctx) }()
	for { // B's create applied: the node is back, owned by the shared session
		mustSync(t, admin, path)
		if _, st, err := admin.Get(path); err == nil && st.EphemeralOwner == conn.SessionID() {
			break
		}
		select {
		case <-ctx.Done():
			close(resume)
			t.Fatal("B's create was not applied")
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(resume)

	if err := <-bLocked; err != nil {
		t.Fatalf("B: Lock: %v", err)
	}
	aErr := <-aLocked
	if aErr == nil {
		t.Fatal("A and B both hold the lock: A adopted the node B made on their shared session")
	}
	if !errors.Is(aErr, zklocks.ErrLockLost) {
		t.Errorf("A: Lock after its node was replaced: %v, want ErrLockLost", aErr)
	}
	locktest.RequireClosedWithin(t, a.Done(), time.Second, "A, whose Lock failed")
	if locktest.IsClosed(b.Done()) {
		t.Error("B's Done closed: B holds the lock")
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B: Unlock: %v", err)
	}
}
