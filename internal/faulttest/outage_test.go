package faulttest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Clean-up that has to wait out an outage longer than the session timeout.
//
// While the ensemble has no quorum no session expires: there is no leader
// to expire it, and the leader elected afterwards gives every session a
// fresh timeout. A client cut off from a quorum-less ensemble for longer
// than its session timeout therefore reconnects with its session, and its
// ephemeral nodes, intact. Whatever clean-up it gave up on during the
// outage, assuming the session had expired, is then an orphan: a node that
// nobody will delete while the session lives, at the head of the lock's
// queue (or at the lock path itself), blocking every other contender.
//
// Two clients per variant, with 4s sessions (long enough to reconnect once
// quorum is back): U calls Unlock during the outage; D's create is applied
// just before the outage and its reply is lost with the connection once
// the outage has begun (the create-time connection loss of
// TestCreateConnectionLoss, but now the client can not look for its node
// until the outage is over). The outage lasts the session timeout plus two
// seconds. Afterwards both sessions are alive and nothing of them may be
// left on their lock paths.
func TestOutageCleanup(t *testing.T) {
	e := zktest.Ensemble(t)
	const st = 4 * time.Second
	tp := newTape()
	ctx := testCtx(t, 3*time.Minute)
	type pair struct {
		v          *variant
		u, d       *client
		drop       *dropper
		dres       <-chan locktest.LockResult
		uErr       error
		uTook      time.Duration
		sidU, sidD int64
	}
	var ps []*pair
	for _, v := range variants {
		p := &pair{v: v}
		p.u = newClient(t, tp, v, zktest.LockPath(t), "U", withTimeout(st))
		dpath := zktest.LockPath(t)
		p.drop = newDropper(t, dropReply, func(s string) bool {
			if v.layout == locktest.NodeAtPath {
				return s == dpath
			}
			return strings.HasPrefix(s, dpath+"/")
		})
		p.drop.hold, p.drop.intercepted = make(chan struct{}), make(chan struct{})
		p.d = newClient(t, tp, v, dpath, "D", withTimeout(st), withDialer(p.drop.dial))
		p.sidU, p.sidD = p.u.conn.SessionID(), p.d.conn.SessionID()
		if err := p.u.l.Lock(p.u.ctx(ctx)); err != nil {
			t.Fatalf("%s: U: Lock: %v", v.name, err)
		}
		tp.leave(tp.enter(p.u), stillHeld) // U's hold ends when it calls Unlock, below
		p.dres = lockAsync(ctx, p.d)
		ps = append(ps, p)
	}
	for _, p := range ps {
		select {
		case <-p.drop.intercepted:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: D's create was not intercepted", p.v.name)
		}
	}

	leader, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	follower, err := aFollower(e, leader)
	if err != nil {
		t.Fatal(err)
	}
	downAt := tp.now()
	for _, i := range []int{leader, follower} {
		if err := e.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("killed members %d and %d at %v: no quorum", leader, follower, downAt.Round(time.Millisecond))
	var wg sync.WaitGroup
	for _, p := range ps {
		close(p.drop.hold) // D's connection breaks now, its reply lost
		wg.Add(1)
		go func() {
			defer wg.Done()
			uctx, cancel := context.WithTimeout(p.u.ctx(ctx), 2*time.Second)
			defer cancel()
			start := time.Now()
			p.uErr = p.u.l.Unlock(uctx)
			p.uTook = time.Since(start)
		}()
	}
	wg.Wait()
	if rest := st + 2*time.Second - (tp.now() - downAt); rest > 0 {
		time.Sleep(rest)
	}
	for _, i := range []int{leader, follower} {
		if err := e.Restart(i); err != nil {
			t.Fatal(err)
		}
	}
	upAt := tp.now()
	t.Logf("quorum back at %v (outage %v)", upAt.Round(time.Millisecond), (upAt - downAt).Round(time.Millisecond))

	admin := zktest.Connect(t)
	for _, p := range ps {
		t.Run(p.v.name, func(t *testing.T) {
			dOutcome := "acquired"
			select {
			case r := <-p.dres:
				if r.Err != nil {
					dOutcome = strconv.Quote(r.Err.Error())
				} else {
					h := tp.enterAt(p.d, tp.at(r.At))
					tp.leave(h, stillHeld)
					if err := p.d.l.Unlock(p.d.ctx(ctx)); err != nil {
						t.Errorf("D: Unlock: %v", err)
					}
				}
			case <-time.After(20 * time.Second):
				dOutcome = "still waiting"
				t.Errorf("D: Lock still blocked 20s after the quorum came back")
			}
			for _, c := range []struct {
				c   *client
				sid int64
			}{{p.u, p.sidU}, {p.d, p.sidD}} {
				if err := waitConnected(c.c.conn, 10*time.Second); err != nil {
					t.Fatalf("%s: %v", c.c.name, err)
				}
				if c.c.conn.SessionID() != c.sid {
					t.Logf("%s: its session expired after all; the case is not exercised for it", c.c.name)
				}
			}
			// Left: what is still there a session timeout (plus 2s) after the
			// quorum came back, before another contender may evict it.
			var left []string
			leftN := 0
			for _, c := range []*client{p.u, p.d} {
				n := nodesLeft(t, admin, p.v, c.path, st+2*time.Second)
				leftN += n
				// The lock is usable: another client gets it.
				o := newClient(t, tp, p.v, c.path, "other-"+c.name)
				octx, cancel := context.WithTimeout(o.ctx(ctx), 5*time.Second)
				if err := o.l.Lock(octx); err != nil {
					t.Errorf("%s's path: another client can not take the lock: %v", c.name, err)
				} else {
					tp.leave(tp.enter(o), stillHeld)
					_ = o.l.Unlock(octx)
				}
				cancel()
				left = append(left, fmt.Sprintf("left_%s=%d", c.name, n))
			}
			holdsU, doubleU, _ := checkHistory(t, tp, p.v, p.u.path)
			holdsD, doubleD, _ := checkHistory(t, tp, p.v, p.d.path)
			report{fault: "outage-cleanup", variant: p.v.name, holds: holdsU + holdsD, double: doubleU + doubleD,
				left:    leftN,
				recover: -1, extra: append(left,
					"outage="+(upAt-downAt).Round(time.Millisecond).String(),
					"session="+st.String(),
					fmt.Sprintf("unlock_during_outage=%q", errText(p.uErr)),
					"unlock_took="+p.uTook.Round(time.Millisecond).String(),
					"create_reply_lost_lock="+dOutcome)}.log(t)
		})
	}
}
