package semaphore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/semaphore"
)

// A waiter let in announces it by writing its own node, and its own
// watch sees that write as a data change, often before its Lock has
// returned. If the connection goes right then, and stays gone, the
// re-arming read of that watch waits in go-zookeeper's queue; the hold's
// Done must still close with the session's epoch (Session.Done), not
// when that read gives up, and before anyone else holds the permit.
// Sessions of 4s: 20 ticks of the local ensemble.
func TestDoneOfAPromotedWaiterFollowsTheSessionWhenItsConnectionGoes(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	const st = 4 * time.Second
	path := zktest.LockPath(t)
	holders := contenders(t, path, 2, 2)
	for _, h := range holders {
		if err := h.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w := zktest.NewWire(t)
	cs := zktest.Connected(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	c, err := semaphore.New(cs, path, 2)
	if err != nil {
		t.Fatal(err)
	}
	cLocked := locktest.LockAsync(ctx, c)
	waitQueued(t, ctx, path, 3)
	d := contenders(t, path, 2, 1)[0]
	dLocked := locktest.LockAsync(ctx, d)
	waitQueued(t, ctx, path, 4)

	// The connection goes with the answer to C's announcement, just after
	// the data change it fired on C's own watch; no dial gets through.
	var mu sync.Mutex
	changed := false
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Request.Op == zktest.OpNotification && r.EventType == zk.EventNodeDataChanged:
			changed = true
		case changed && r.Request.Op == zktest.OpSetData:
			w.HoldDials()
			return zktest.Break
		}
		return zktest.Pass
	})
	if err := holders[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	res := locktest.AwaitLock(t, cLocked, 20*time.Second, "C, let in")
	if res.Err != nil {
		t.Fatalf("C's Lock: %v", res.Err)
	}
	mu.Lock()
	if !changed {
		t.Fatal("C's own watch saw no data change: the case under test did not happen")
	}
	mu.Unlock()
	holdDone, sessionDone := c.Done(), cs.Done() // taken while C holds
	if locktest.IsClosed(holdDone) {
		t.Fatalf("C's Done closed as Lock returned: %v", c.Err())
	}

	closedAt := func(ch <-chan struct{}) <-chan time.Time {
		at := make(chan time.Time, 1)
		go func() { <-ch; at <- time.Now() }()
		return at
	}
	holdAt, sessionAt := closedAt(holdDone), closedAt(sessionDone)
	var sAt, hAt time.Time
	select {
	case sAt = <-sessionAt:
	case <-ctx.Done():
		t.Fatal("C's Session.Done never closed with its connection gone")
	}
	select {
	case hAt = <-holdAt:
	case r := <-dLocked:
		t.Fatalf("D holds C's permit (%v) while C's Done is open, %v after C's Session.Done", r.Err, time.Since(sAt))
	case <-ctx.Done():
		t.Fatal("C's Done never closed")
	}
	late := hAt.Sub(sAt)
	t.Logf("C's Done closed %v after its Session.Done", late.Round(time.Millisecond))
	if late > 50*time.Millisecond {
		t.Errorf("C's Done closed %v after its Session.Done; want within 50ms", late.Round(time.Millisecond))
	}
	// C's session expires with its dials held, and D is let in.
	if r := locktest.AwaitLock(t, dLocked, 20*time.Second, "D"); r.Err != nil {
		t.Fatalf("D's Lock: %v", r.Err)
	}
	w.ReleaseDials()
}
