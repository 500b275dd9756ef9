package faulttest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// minHold is the shortest time for which a holder that falls silent (cut
// off, paused) at moment s keeps the lock, counted from the last request
// the servers heard from it: its session timeout; for a leased variant,
// two thirds of the lease (it renews every third, and a waiter evicts it a
// full lease after its last renewal).
func (v *variant) minHold(st time.Duration) time.Duration {
	if v.lease == nil {
		return st
	}
	return min(st, 2*v.lease(st)/3)
}

// locktest.LockResult is the outcome of a Lock run in its own goroutine.
// lockAsync runs c's Lock in the background, with c's context (its
// owner, for the re-entrant lock).
func lockAsync(ctx context.Context, c *client) <-chan locktest.LockResult {
	return locktest.LockAsync(c.ctx(ctx), c.l)
}

// waitQueued waits until c's Lock (running elsewhere) is waiting: its node
// is in the queue, or (naive) it has sent its create and its watch.
func waitQueued(t *testing.T, admin *zk.Conn, c *client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	sid := c.conn.SessionID()
	for time.Now().Before(deadline) {
		if c.v.layout == locktest.NodeAtPath {
			if c.l.(interface{ Stats() zklocks.Stats }).Stats().Requests >= 2 {
				time.Sleep(20 * time.Millisecond) // let the watch request reach the server
				return
			}
		} else {
			kids, _, err := admin.Children(c.path)
			if err == nil {
				for _, k := range kids {
					if _, st, err := admin.Get(c.path + "/" + k); err == nil && st.EphemeralOwner == sid {
						return
					}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: not queued after 10s", c.name)
}

// ownNodes lists the lock nodes on c's path that belong to c's session sid.
func ownNodes(t *testing.T, admin *zk.Conn, c *client, sid int64) []string {
	t.Helper()
	nodes, err := lockNodes(admin, c.v, c.path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes {
		p := n
		if c.v.layout == locktest.ChildrenOfPath {
			p = c.path + "/" + n
		}
		if _, st, err := admin.Get(p); err == nil && st.EphemeralOwner == sid {
			out = append(out, p)
		}
	}
	return out
}

// waitSessionEnded waits until c has learned that session sid is over.
func waitSessionEnded(t *testing.T, c *client, sid int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !c.sessionEnded(sid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: session %#x not over after %v", c.name, sid, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := waitConnected(c.conn, within); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
}

func waitConnected(conn *zk.Conn, within time.Duration) error {
	deadline := time.Now().Add(within)
	for conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			return fmt.Errorf("no session after %v (state %v)", within, conn.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// A holder cut off from the ensemble while a waiter queues behind it,
// once with its TCP connections closed (the client notices at once) and
// once silently (nothing arrives, nothing leaves: the client notices only
// when its read timeout runs out):
//   - the lock passes to the waiter only once the holder's session can
//     have expired (the waiter's Lock returns no sooner than the session
//     timeout after the last request the servers heard from the holder);
//   - the holder's Done closes before the waiter holds the lock: no
//     moment when both believe they hold it;
//   - healed, the holder does not believe it holds the lock: Done closed,
//     Unlock reports the loss, and its write to a fenced store is refused;
//     the new holder keeps its lock through all this.
func TestCutHolder(t *testing.T) {
	for _, cut := range []struct {
		name string
		do   func(*zktest.Cutter)
	}{
		{"closed", (*zktest.Cutter).Cut},
		{"silent", (*zktest.Cutter).Silence},
	} {
		t.Run(cut.name, func(t *testing.T) {
			testCutHolder(t, "cut-holder-"+cut.name, false, func(t *testing.T) isolation {
				return isolation{
					holder: []clientOpt{withTimeout(expiryTimeout), withCutter()},
					admin:  zktest.Connect(t),
					cut:    func(t *testing.T, h *client) { cut.do(h.cut) },
					heal:   func(t *testing.T, h *client) { h.cut.Heal() },
				}
			})
		})
	}
}

// isolation is how a test separates a holder from the servers that can
// still make decisions, and how it ends that.
type isolation struct {
	holder, waiter []clientOpt // how the holder and the waiter connect
	admin          *zk.Conn    // a session on the waiter's side
	cut, heal      func(t *testing.T, h *client)
	// touchLag is how much earlier than the holder's last request the
	// servers may date their last sign of its session. A follower tells
	// the leader of the sessions it heard from in its answers to the
	// leader's pings, every half tick, and only then does the leader touch
	// them (LearnerSessionTracker's touch table, sent and cleared with each
	// ping; Leader.lead pings every half tick). A cut right after the
	// holder's last request can come before the ping that would carry it:
	// the leader's last touch is then the ping that carried the request
	// before it, which the session's keeper sends at most an eighth of a
	// session timeout earlier (internal/liveness), plus that half tick.
	touchLag time.Duration
	// electing: the fault makes the ensemble elect a leader before the
	// waiter can hold, which can take many seconds here (see
	// ensemble.Partition on the election links).
	electing bool
}

// testCutHolder runs the cut-holder checks for every variant, all at once
// when each has a fault of its own, in turn when the fault acts on the
// whole ensemble (shared).
func testCutHolder(t *testing.T, fault string, shared bool, setup func(t *testing.T) isolation) {
	run := forEachVariant
	if shared {
		run = forEachVariantInTurn
	}
	run(t, func(t *testing.T, v *variant) { testCutHolderVariant(t, fault, v, setup) })
}

// testCutHolderVariant is testCutHolder's run of one variant.
func testCutHolderVariant(t *testing.T, fault string, v *variant, setup func(t *testing.T) isolation) {
	{
		ctx := testCtx(t, 60*time.Second)
		tp := newTape()
		path := zktest.LockPath(t)
		is := setup(t)
		admin := is.admin
		store, err := fence.Create(filepath.Join(t.TempDir(), "store.json"), fence.Fenced)
		if err != nil {
			t.Fatal(err)
		}
		h := newClient(t, tp, v, path, "holder", is.holder...)
		probe := zktest.NewSessionProbe(t, h.conn)
		w := newClient(t, tp, v, path, "waiter", is.waiter...)

		if err := h.l.Lock(h.ctx(ctx)); err != nil {
			t.Fatalf("holder: Lock: %v", err)
		}
		hh := tp.enter(h)
		tokH, sidH := h.l.Token(), h.conn.SessionID()
		if err := store.Write(tokH, "holder", "written by the holder"); err != nil {
			t.Fatal(err)
		}
		doneH := make(chan time.Duration, 1)
		go func(done <-chan struct{}) { <-done; doneH <- tp.now() }(h.l.Done())
		wres := lockAsync(ctx, w)
		waitQueued(t, admin, w)
		queuedAt := tp.now()

		// The last request the servers hear from the holder, then the cut.
		syncSent := tp.now()
		if _, err := h.conn.Sync(path); err != nil {
			t.Fatal(err)
		}
		cutAt := tp.now()
		is.cut(t, h)

		within := 2*h.st + 10*time.Second
		if is.electing {
			within += 50 * time.Second
		}
		r := locktest.AwaitLock(t, wres, within, "waiter")
		if r.Err != nil {
			t.Fatalf("waiter: Lock after the holder was cut off: %v", r.Err)
		}
		wEnter := tp.at(r.At)
		wh := tp.enterAt(w, wEnter)
		// The servers can not have expired the holder before a session
		// timeout (or, leased, two thirds of a lease) after the request it
		// sent at syncSent. 20ms of slack: the servers' clock is the same
		// machine's, read by another process.
		if earliest := syncSent - is.touchLag + v.minHold(h.st); wEnter < earliest-clockSlack {
			t.Errorf("the waiter got the lock %v after the cut, before the holder's session (timeout %v) could have expired",
				wEnter-cutAt, h.st)
		}
		var hDone time.Duration
		select {
		case hDone = <-doneH:
		case <-time.After(h.st + tick + lossSlack):
			t.Fatalf("holder: Done still open %v after the cut (session timeout %v)", tp.now()-cutAt, h.st)
		}
		if hDone > wEnter {
			t.Errorf("holder: Done closed %v after the cut, %v after the waiter took the lock; want before",
				hDone-cutAt, hDone-wEnter)
		}
		tokW := w.l.Token()
		if tokW <= tokH {
			t.Errorf("waiter's token %d is not larger than the cut holder's %d", tokW, tokH)
		}
		if err := store.Write(tokW, "waiter", "written by the waiter"); err != nil {
			t.Errorf("waiter's write: %v", err)
		}

		// Heal once the servers have expired the holder's session (a leased
		// holder can lose the lock earlier, by eviction).
		probe.WaitExpired(t, admin, 2*h.st+10*time.Second)
		expiredAt := tp.now()
		is.heal(t, h)
		healedAt := tp.now()
		waitSessionEnded(t, h, sidH, 20*time.Second)
		if !locktest.IsClosed(h.l.Done()) {
			t.Error("holder: Done open after it reconnected with a new session")
		}
		tp.leave(hh, hDone)
		uerr := h.l.Unlock(h.ctx(ctx))
		if !errors.Is(uerr, zklocks.ErrLockLost) && !errors.Is(uerr, zklocks.ErrNotLocked) {
			t.Errorf("holder: Unlock after its session expired: %v; want %v or %v", uerr, zklocks.ErrLockLost, zklocks.ErrNotLocked)
		}
		werr := store.Write(tokH, "holder", "the holder's late write")
		if !errors.Is(werr, fence.ErrStaleToken) {
			t.Errorf("holder's late write: %v; want %v", werr, fence.ErrStaleToken)
		}
		if locktest.IsClosed(w.l.Done()) {
			t.Error("waiter: Done closed after the old holder came back")
		}
		if len(ownNodes(t, admin, w, w.conn.SessionID())) != 1 {
			t.Error("waiter: its node is gone after the old holder came back")
		}
		tp.leave(wh, stillHeld)
		wExit := tp.now()
		if err := w.l.Unlock(w.ctx(ctx)); err != nil {
			t.Errorf("waiter: Unlock: %v", err)
		}
		if *timeline != "" && fault == "isolated-leader-with-holder" && v.name == "sequential" {
			drawTimeline(t, *timeline, fault+", "+v.name, []timelineRow{
				{"holder", []bar{{hh.enter, hDone, "holds"}}},
				{"waiter", []bar{{queuedAt, wEnter, "waits"}, {wEnter, wExit, "holds"}}},
			}, []mark{{cutAt, "leader cut off"}, {hDone, "holder's Done"}, {wEnter, "waiter holds"},
				{expiredAt, "expiry seen"}, {healedAt, "healed"}})
		}
		holds, double, belief := checkHistory(t, tp, v, path)
		left := nodesLeft(t, admin, v, path, h.st+2*time.Second)
		report{fault: fault, variant: v.name, holds: holds, double: double, left: left,
			recover: wEnter - cutAt, belief: belief, extra: []string{
				"done_after_cut=" + (hDone - cutAt).Round(time.Millisecond).String(),
				// > 0: the new holder had the lock while the old one still believed it did.
				"believed_after_handover=" + max(0, hDone-wEnter).Round(time.Millisecond).String(),
				"session=" + h.st.String(),
				fmt.Sprintf("late_unlock=%q", errText(uerr)),
				"late_write=rejected",
			}}.log(t)
	}
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// A waiter cut off while it waits. Cut for longer than its session
// timeout, it loses its place: the lock passes on, and when it reconnects
// it must not take the lock on the strength of what it saw before (a
// predecessor that went away while it was gone); it fails, or queues
// afresh. Cut briefly, its session survives and it acquires in its turn.
func TestCutWaiter(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v *variant) {
		t.Run("expired", func(t *testing.T) { testCutWaiterExpired(t, v) })
		t.Run("survived", func(t *testing.T) { testCutWaiterSurvived(t, v) })
		t.Run("survived-alone", func(t *testing.T) { testCutWaiterAlone(t, v) })
	})
}

// waiterScene is where the cut-waiter tests start: a holder, a waiter
// queued behind it on a cuttable connection, and, when asked for, another
// client queued behind the waiter.
type waiterScene struct {
	tp         *tape
	path       string
	admin      *zk.Conn
	h, w, x    *client  // x is nil without the other client
	hh         *holdRec // the holder's hold on the tape
	sidW       int64
	wres, xres <-chan locktest.LockResult
}

// newWaiterScene sets the scene: the holder holds, the waiter (session
// timeout st) and the other client are queued, and the servers list their
// watches.
func newWaiterScene(t *testing.T, ctx context.Context, v *variant, st time.Duration, other bool) *waiterScene {
	s := &waiterScene{tp: newTape(), path: zktest.LockPath(t), admin: zktest.Connect(t)}
	s.h = newClient(t, s.tp, v, s.path, "holder")
	s.w = newClient(t, s.tp, v, s.path, "waiter", withTimeout(st), withCutter())
	if other {
		s.x = newClient(t, s.tp, v, s.path, "other")
	}
	s.sidW = s.w.conn.SessionID()
	if err := s.h.l.Lock(s.h.ctx(ctx)); err != nil {
		t.Fatal(err)
	}
	s.hh = s.tp.enter(s.h)
	s.wres = lockAsync(ctx, s.w)
	waitQueued(t, s.admin, s.w)
	if other {
		s.xres = lockAsync(ctx, s.x)
		waitQueued(t, s.admin, s.x)
	}
	return s
}

// cutAndRelease cuts the waiter off and has the holder release the lock
// while it is away. It returns when the cut began.
func (s *waiterScene) cutAndRelease(t *testing.T, ctx context.Context) time.Duration {
	cutAt := s.tp.now()
	s.w.cut.Cut()
	s.tp.leave(s.hh, stillHeld)
	if err := s.h.l.Unlock(s.h.ctx(ctx)); err != nil {
		t.Fatal(err)
	}
	return cutAt
}

func testCutWaiterExpired(t *testing.T, v *variant) {
	ctx := testCtx(t, 90*time.Second)
	s := newWaiterScene(t, ctx, v, expiryTimeout, true)
	tp, path, admin, w, x, sidW, wres, xres := s.tp, s.path, s.admin, s.w, s.x, s.sidW, s.wres, s.xres
	probe := zktest.NewSessionProbe(t, w.conn)

	// The waiter drops off the network; while it is away the holder
	// releases, the waiter's session expires, and the other client takes
	// the lock.
	cutAt := s.cutAndRelease(t, ctx)
	probe.WaitExpired(t, admin, 2*w.st+10*time.Second)
	xr := locktest.AwaitLock(t, xres, 10*time.Second, "other")
	if xr.Err != nil {
		t.Fatalf("other: Lock: %v", xr.Err)
	}
	xh := tp.enterAt(x, tp.at(xr.At))
	healAt := tp.now()
	w.cut.Heal()

	// The waiter comes back with a stale view while the other client
	// holds the lock for three more seconds.
	var wr locktest.LockResult
	got := false
	select {
	case wr = <-wres:
		got = true
	case <-time.After(3 * time.Second):
	}
	tp.leave(xh, stillHeld)
	if err := x.l.Unlock(x.ctx(ctx)); err != nil {
		t.Errorf("other: Unlock: %v", err)
	}
	if !got {
		wr = locktest.AwaitLock(t, wres, 20*time.Second, "waiter")
	}
	outcome := "acquired"
	rec := time.Duration(-1)
	if wr.Err == nil {
		// Allowed only as a fresh acquisition; the history shows whether
		// it overlapped the other client's hold.
		rec = tp.at(wr.At) - healAt
		wh := tp.enterAt(w, tp.at(wr.At))
		tp.leave(wh, stillHeld)
		if err := w.l.Unlock(w.ctx(ctx)); err != nil {
			t.Errorf("waiter: Unlock: %v", err)
		}
	} else {
		outcome = strconv.Quote(wr.Err.Error())
		if !errors.Is(wr.Err, zklocks.ErrLockLost) && !clearOutageError(wr.Err) && !errors.Is(wr.Err, zk.ErrSessionExpired) {
			t.Errorf("waiter: Lock after its session expired: %v; want %v or a connection error", wr.Err, zklocks.ErrLockLost)
		}
	}
	waitSessionEnded(t, w, sidW, 10*time.Second)
	holds, double, belief := checkHistory(t, tp, v, path)
	left := nodesLeft(t, admin, v, path, w.st+2*time.Second)
	report{fault: "cut-waiter-expired", variant: v.name, holds: holds, double: double, left: left,
		recover: rec, belief: belief, extra: []string{
			"cut=" + (healAt - cutAt).Round(time.Millisecond).String(),
			"session=" + w.st.String(),
			"waiter=" + outcome,
		}}.log(t)
}

func testCutWaiterSurvived(t *testing.T, v *variant) {
	const st, cut = 4 * time.Second, 300 * time.Millisecond
	ctx := testCtx(t, 90*time.Second)
	s := newWaiterScene(t, ctx, v, st, true)
	tp, path, admin, w, x, sidW, wres, xres := s.tp, s.path, s.admin, s.w, s.x, s.sidW, s.wres, s.xres
	cutAt := s.cutAndRelease(t, ctx)
	time.Sleep(cut)
	healAt := tp.now()
	w.cut.Heal()

	// Both get the lock in turn; each holds it briefly.
	var order []string
	var rec time.Duration
	for range 2 {
		var r locktest.LockResult
		var c *client
		select {
		case r = <-wres:
			c, wres = w, nil
			rec = tp.at(r.At) - healAt
		case r = <-xres:
			c, xres = x, nil
		case <-time.After(20 * time.Second):
			t.Fatalf("no Lock returned 20s after the heal (acquired so far: %v)", order)
		}
		if r.Err != nil {
			t.Fatalf("%s: Lock: %v", c.name, r.Err)
		}
		order = append(order, c.name)
		hc := tp.enterAt(c, tp.at(r.At))
		time.Sleep(20 * time.Millisecond)
		tp.leave(hc, stillHeld)
		if err := c.l.Unlock(c.ctx(ctx)); err != nil {
			t.Errorf("%s: Unlock: %v", c.name, err)
		}
	}
	if w.sessionEnded(sidW) {
		t.Errorf("waiter: session %#x expired during a %v cut (timeout %v)", sidW, cut, st)
	}
	if v.layout == locktest.ChildrenOfPath && order[0] != "waiter" {
		t.Errorf("acquired in the order %v: the waiter kept its place in the queue, it should have been first", order)
	}
	holds, double, belief := checkHistory(t, tp, v, path)
	left := nodesLeft(t, admin, v, path, st+2*time.Second)
	report{fault: "cut-waiter-survived", variant: v.name, holds: holds, double: double, left: left,
		recover: rec, belief: belief, extra: []string{
			"cut=" + (healAt - cutAt).Round(time.Millisecond).String(),
			"session=" + st.String(),
			"order=" + strings.Join(order, ","),
		}}.log(t)
}

// The lock is released while its only waiter is briefly cut off (its
// session survives), so no other client's activity can wake it. When the
// waiter reconnects, go-zookeeper re-registers its watches with the last
// zxid it saw, and the server reports what changed meanwhile: the waiter
// must learn from that alone that the lock is free, and take it.
func testCutWaiterAlone(t *testing.T, v *variant) {
	const st, cut = 4 * time.Second, 300 * time.Millisecond
	ctx := testCtx(t, 60*time.Second)
	s := newWaiterScene(t, ctx, v, st, false)
	tp, path, admin, w, sidW, wres := s.tp, s.path, s.admin, s.w, s.sidW, s.wres
	cutAt := s.cutAndRelease(t, ctx)
	time.Sleep(cut)
	healAt := tp.now()
	w.cut.Heal()

	rec := time.Duration(-1)
	outcome := "acquired"
	select {
	case r := <-wres:
		if r.Err != nil {
			t.Fatalf("waiter: Lock: %v", r.Err)
		}
		rec = tp.at(r.At) - healAt
		wh := tp.enterAt(w, tp.at(r.At))
		tp.leave(wh, stillHeld)
		if err := w.l.Unlock(w.ctx(ctx)); err != nil {
			t.Errorf("waiter: Unlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		outcome = "still-waiting"
		t.Errorf("waiter: still waiting 10s after it reconnected, with the lock free since before (session %#x alive: %v)",
			sidW, !w.sessionEnded(sidW))
	}
	holds, double, belief := checkHistory(t, tp, v, path)
	left := nodesLeft(t, admin, v, path, st+2*time.Second)
	report{fault: "cut-waiter-alone", variant: v.name, holds: holds, double: double, left: left,
		recover: rec, belief: belief, extra: []string{
			"cut=" + (healAt - cutAt).Round(time.Millisecond).String(),
			"session=" + st.String(),
			"waiter=" + outcome,
		}}.log(t)
}
