package zkop_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zktest"
)

// A connection that loses its server reads StateDisconnected only for an
// instant, unless the goroutine of that instant is kept off the CPU, as on
// a loaded machine. Here the event loop is held in that state for 300ms
// (zktest.Gate) while a background delete of one of the session's nodes
// waits for the connection. The delete must not take the stalled
// connection for a closed one: once the connection is back, on the same
// session, the node goes. (Taking it for closed left the node for the
// session's life: the stall of TestRandomHalves.)
func TestDeleteLaterOutlastsAStalledReconnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gate := zktest.NewGate()
	wd := newWired(ctx, t, zktest.WithEventCallback(gate.Callback))
	t.Cleanup(gate.Open) // before the connection is closed
	w, conn, c := wd.w, wd.conn, wd.c
	node, err := c.Create(ctx, wd.path+"/n", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	sid := conn.SessionID()

	held := gate.Arm()
	w.BreakAll()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the connection never reported the loss of its server")
	}
	c.DeleteLater(node)
	time.Sleep(300 * time.Millisecond) // the fault: the loop stays held this long
	gate.Open()

	if err := wd.awaitGone(ctx, node); err != nil {
		t.Fatalf("%s, a node of the live session %#x (now %#x), left 20s after a 300ms stall in StateDisconnected: the clean-up took the connection for closed (%v)",
			node, sid, conn.SessionID(), err)
	}
	if conn.SessionID() != sid {
		t.Errorf("premise: the session changed (%#x to %#x); the node would have gone with the old one", sid, conn.SessionID())
	}
}
