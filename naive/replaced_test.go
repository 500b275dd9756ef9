package naive_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/naive"
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
	if !errors.Is(err, naive.ErrLockLost) {
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
