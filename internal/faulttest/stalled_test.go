package faulttest

import (
	"context"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// The stall of TestRandomHalves, made to happen. b waits behind a; b's
// connection loses its server and its event loop is held in
// StateDisconnected for 300ms (zktest.Gate), as a loaded machine can do
// to that goroutine; b's ctx is cancelled meanwhile, so its node is left
// to the background. It must still go once b is back on its session:
// taken for a closed connection, it stayed at the head of the queue for
// the session's life, and nobody else could hold the lock. Every variant
// at once. (Here and not in locktest: the reconnection with watches set
// trips go-zookeeper's own data race under -race, see the Makefile.)
func TestAbandonOutlastsAStalledReconnection(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v *variant) {
		ctx := testCtx(t, 30*time.Second)
		tp := newTape()
		path := zktest.LockPath(t)
		admin := zktest.Connect(t)
		a := newClient(t, tp, v, path, "a")
		w, gate := zktest.NewWire(t), zktest.NewGate()
		b := newClient(t, tp, v, path, "b", withTimeout(4*time.Second), withDialer(w.Dialer()), withEventCallback(gate.Callback))
		t.Cleanup(gate.Open) // before b's connection is closed
		c := newClient(t, tp, v, path, "c")
		if err := a.l.Lock(a.ctx(ctx)); err != nil {
			t.Fatalf("a: Lock: %v", err)
		}
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		res := lockAsync(bctx, b)
		waitQueued(t, admin, b)

		held := gate.Arm()
		w.BreakAll()
		select {
		case <-held:
		case <-ctx.Done():
			t.Fatal("b's connection never reported the loss of its server")
		}
		cancel()
		if r := locktest.AwaitLock(t, res, 5*time.Second, "b"); r.Err == nil {
			t.Fatal("b: Lock succeeded after its ctx was cancelled while a held the lock")
		}
		time.Sleep(300 * time.Millisecond) // the fault: the loop stays held this long
		gate.Open()

		if err := a.l.Unlock(a.ctx(ctx)); err != nil {
			t.Fatalf("a: Unlock: %v", err)
		}
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if err := c.l.Lock(c.ctx(cctx)); err != nil {
			t.Fatalf("c: Lock after a's Unlock: %v; b's nodes left on its live session: %v", err, ownNodes(t, admin, b, b.conn.SessionID()))
		}
		if err := c.l.Unlock(c.ctx(ctx)); err != nil {
			t.Errorf("c: Unlock: %v", err)
		}
		nodesLeft(t, admin, v, path, 5*time.Second)
	})
}
