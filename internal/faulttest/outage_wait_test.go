package faulttest

import (
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// An outage is no reason to give up. A client that can reach no server
// (every dial refused) for longer than any retry budget the locks had
// (about 8s: six failures, each dial round one), and for less than its
// session timeout, goes on waiting in Lock while its ctx allows, holds
// the lock once it is back on the same session, and leaves nothing after
// Unlock. Every variant at once, each on its own client.
func TestLockWaitsOutAnOutage(t *testing.T) {
	const st, outage = 20 * time.Second, 9 * time.Second
	forEachVariant(t, func(t *testing.T, v *variant) {
		ctx := testCtx(t, 60*time.Second)
		tp := newTape()
		path := zktest.LockPath(t)
		admin := zktest.Connect(t)
		c := newClient(t, tp, v, path, "client", withTimeout(st), withCutter())
		sid := c.conn.SessionID()
		c.cut.Cut()
		healAt := time.Now().Add(outage)
		healer := time.AfterFunc(outage, c.cut.Heal) // the fault's schedule, not a synchronisation
		t.Cleanup(func() { healer.Stop(); c.cut.Heal() })

		start := time.Now()
		if err := c.l.Lock(c.ctx(ctx)); err != nil {
			d, _ := ctx.Deadline()
			t.Fatalf("Lock started during a %v outage returned after %v, with %v of its ctx left: %v; want it to wait while ctx allows",
				outage, time.Since(start).Round(time.Millisecond), time.Until(d).Round(time.Second), err)
		}
		if early := time.Until(healAt); early > 0 {
			t.Fatalf("Lock returned %v before the client could reach any server", early)
		}
		if c.conn.SessionID() != sid {
			t.Fatalf("premise: the session changed during a %v outage with a %v session timeout", outage, st)
		}
		if n := len(ownNodes(t, admin, c, sid)); n != 1 {
			t.Errorf("%d nodes of the holder's session after the outage, want 1", n)
		}
		if err := c.l.Unlock(c.ctx(ctx)); err != nil {
			t.Errorf("Unlock after the outage: %v", err)
		}
		nodesLeft(t, admin, v, path, 5*time.Second)
	})
}
