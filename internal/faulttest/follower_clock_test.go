package faulttest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// The worst moment to lose a follower, for a holder attached to it: right
// after the follower relayed the answer to the holder's own sync. The
// leader never refreshes a session on a request a follower forwards; it
// refreshes it only when the follower's next ping reply lists it (every
// half tick), and a follower cut off right after the answer never sends
// that reply. So the leader dates the session from the report before,
// and the answered sync proves nothing about itself: internal/hold may
// count it only once a later request, sent long enough after its answer
// for a ping reply to have gone ahead of it, is answered too.
//
// Production ensembles grant sessions of 10 to 30 ticks, where the gap
// between the two datings is seconds: the test runs at 20 and 30 ticks,
// with the cut placed by the holder's wire right after a sync's answer,
// and requires Done to close before the waiter holds. Its ensemble ticks
// every 100ms, so that those ratios take half the time they would at the
// other tests' 200ms.
func TestHolderOnFollowerCutRightAfterItsSync(t *testing.T) {
	const fastTick = 100 * time.Millisecond
	e := zktest.PrivateEnsemble(t, func(c *ensemble.Config) { c.ProxiedLinks, c.TickTime = true, fastTick })
	env := relayEnv(e)
	for _, ticks := range []int{20, 30} {
		st := time.Duration(ticks) * fastTick
		t.Run(fmt.Sprintf("%d-ticks", ticks), func(t *testing.T) {
			forEachVariantInTurn(t, func(t *testing.T, v *variant) {
				testCutRightAfterSync(t, env, v, ticks, st)
			})
		})
	}
}

func testCutRightAfterSync(t *testing.T, env cutEnv, v *variant, ticks int, st time.Duration) {
	ctx := testCtx(t, 90*time.Second)
	e := env.e
	leader, rest := leaderAndRest(t, e)
	follower, others := rest[0], []int{leader, rest[1]}
	majority := addrs(e, others)

	wire := zktest.NewWireOver(t, env.dialer(t, "holder"))
	synced := make(chan struct{}, 1)
	wire.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpSync && r.Err == 0 {
			select {
			case synced <- struct{}{}:
			default:
			}
		}
		return zktest.Pass
	})
	tp := newTape()
	path := zktest.LockPath(t)
	admin := zktest.Connect(t, zktest.WithServers(majority), zktest.WithDialer(env.dialer(t, "admin")))
	h := newClient(t, tp, v, path, "holder", withTimeout(st), withServers(e.Servers()[follower]), withDialer(wire.Dialer()))
	w := newClient(t, tp, v, path, "waiter", withServers(majority...), withDialer(env.dialer(t, "waiter")))

	if err := h.l.Lock(h.ctx(ctx)); err != nil {
		t.Fatalf("holder: Lock: %v", err)
	}
	hh := tp.enter(h)
	tokH, sidH := h.l.Token(), h.conn.SessionID()
	doneH := make(chan time.Duration, 1)
	go func(done <-chan struct{}) { <-done; doneH <- tp.now() }(h.l.Done())
	wres := lockAsync(ctx, w)
	waitQueued(t, admin, w)

	// The next sync the holder's side sends on its own (nothing here
	// sends one), then the cut, before the follower's next ping reply.
	select {
	case <-synced:
	default:
	}
	select {
	case <-synced:
	case <-time.After(st):
		t.Fatalf("the holder sent no sync in a session timeout (%v): nothing keeps its clock of the leader fresh", st)
	}
	cutAt := tp.now()
	t.Cleanup(func() { _ = e.Heal() }) // should the test stop before it heals
	if err := e.PartitionSilently([]int{follower}, others); err != nil {
		t.Fatal(err)
	}

	r := locktest.AwaitLock(t, wres, 2*st+10*time.Second, "waiter")
	if r.Err != nil {
		t.Fatalf("waiter: Lock after the holder's follower was cut off: %v", r.Err)
	}
	wEnter := tp.at(r.At)
	wh := tp.enterAt(w, wEnter)
	var hDone time.Duration
	select {
	case hDone = <-doneH:
	case <-time.After(st + lossSlack):
		t.Fatalf("holder: Done still open %v after the cut (session timeout %v)", tp.now()-cutAt, st)
	}
	t.Logf("%s, session %v: Done %v after the cut, the waiter held %v after it: margin %v",
		v.name, st, (hDone - cutAt).Round(time.Millisecond), (wEnter - cutAt).Round(time.Millisecond),
		(wEnter - hDone).Round(time.Millisecond))
	t.Logf("CUTREPORT fault=follower-cut-after-sync harness=%s ticks=%d variant=%s done=%v waiter=%v margin=%v",
		env.harness, ticks, v.name, (hDone - cutAt).Round(time.Millisecond), (wEnter - cutAt).Round(time.Millisecond),
		(wEnter - hDone).Round(time.Millisecond))
	if hDone > wEnter {
		t.Errorf("holder: Done closed %v after the cut, %v after the waiter took the lock; want before",
			(hDone - cutAt).Round(time.Millisecond), (hDone - wEnter).Round(time.Millisecond))
	}
	if tokW := w.l.Token(); tokW <= tokH {
		t.Errorf("waiter's token %d is not larger than the cut holder's %d", tokW, tokH)
	}

	heal(t, e)
	waitSessionEnded(t, h, sidH, 2*st+20*time.Second)
	tp.leave(hh, hDone)
	if err := h.l.Unlock(h.ctx(ctx)); !errors.Is(err, zklocks.ErrLockLost) && !errors.Is(err, zklocks.ErrNotLocked) {
		t.Errorf("holder: Unlock after its session expired: %v; want %v or %v", err, zklocks.ErrLockLost, zklocks.ErrNotLocked)
	}
	tp.leave(wh, stillHeld)
	if err := w.l.Unlock(w.ctx(ctx)); err != nil {
		t.Errorf("waiter: Unlock: %v", err)
	}
	checkHistory(t, tp, v, path)
	nodesLeft(t, admin, v, path, st+2*time.Second)
}
