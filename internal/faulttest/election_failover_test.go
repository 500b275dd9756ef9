//go:build unix

package faulttest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/fence"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// The election's failover: how long the candidates go without a leader
// once the leader is lost, against the leader's session timeout. One
// follower campaigns behind the leader, which is lost in one of four ways:
//
//   - closed: its process ends cleanly and closes its session: the
//     servers delete its node with the session, at once;
//   - killed: its process dies (SIGKILL) and says nothing: the kernel
//     closes the TCP connection, but the session lives on until the
//     servers expire it, a session timeout after they last heard from it;
//   - paused: its process is frozen (SIGSTOP): the same, and thawed, it
//     finds its term over and its write under the old term refused;
//   - partitioned: its client is cut off silently: the same, and its Done
//     closes before the follower leads.
//
// The follower must lead no sooner than the leader's session can have
// ended (closed: before the session could have expired; the others: no
// sooner than a session timeout after the leader's last request), and
// within three session timeouts of the fault. Each subtest logs a
// FAULTREPORT line whose recover= is the failover, with ratio= (failover
// over the session timeout) and ratio_last= (the same from the leader's
// last request the test saw: for a child process, the sync of its
// Campaign, after which it went on pinging, so that ratio overstates),
// for chapter 10:
//
//	go test -count=1 -v -run TestElectionFailover ./internal/faulttest | grep FAULTREPORT
func TestElectionFailover(t *testing.T) {
	for _, c := range []struct {
		name string
		lose func(r *failoverRun)
	}{
		{"closed", loseClosed},
		{"killed", func(r *failoverRun) { loseChild(r, false) }},
		{"paused", func(r *failoverRun) { loseChild(r, true) }},
		{"partitioned", losePartitioned},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.lose(&failoverRun{t: t, how: c.name, v: variantNamed("election"), st: expiryTimeout,
				tp: newTape(), path: zktest.LockPath(t), admin: zktest.Connect(t), ctx: testCtx(t, 60*time.Second)})
		})
	}
}

// failoverRun is one election whose leader is lost.
type failoverRun struct {
	t     *testing.T
	how   string
	v     *variant
	st    time.Duration // the leader's session timeout
	tp    *tape
	path  string
	admin *zk.Conn
	ctx   context.Context

	f    *client // the follower
	fres <-chan locktest.LockResult

	// opts, when set, are the client options of the client named name
	// (the namespace re-run's servers and dialers).
	opts func(name string) []clientOpt
}

func (r *failoverRun) clientOpts(name string) []clientOpt {
	if r.opts == nil {
		return nil
	}
	return r.opts(name)
}

// queue starts the follower's campaign and waits until its node is in
// the queue behind the leader's.
func (r *failoverRun) queue() {
	r.f = newClient(r.t, r.tp, r.v, r.path, "follower", r.clientOpts("follower")...)
	r.fres = lockAsync(r.ctx, r.f)
	waitQueued(r.t, r.admin, r.f)
}

// elected waits for the follower to lead and records its term.
func (r *failoverRun) elected() (time.Duration, *holdRec) {
	res := locktest.AwaitLock(r.t, r.fres, 2*r.st+10*time.Second, "follower")
	if res.Err != nil {
		r.t.Fatalf("follower: Campaign after the leader was lost: %v", res.Err)
	}
	at := r.tp.at(res.At)
	return at, r.tp.enterAt(r.f, at)
}

// finish checks the failover against its bounds (earliest: when the
// leader's session can have ended at the soonest), ends the follower's
// term, checks the history and the path, and logs the report.
func (r *failoverRun) finish(faultAt, lastRequest, earliest, elected time.Duration, fh *holdRec, extra ...string) {
	t := r.t
	failover := elected - faultAt
	if elected < earliest-clockSlack {
		t.Errorf("the follower led %v after the fault, %v before the leader's session (timeout %v) can have ended",
			failover, earliest-elected, r.st)
	}
	if failover > 3*r.st {
		t.Errorf("the follower led %v after the fault: more than three session timeouts (%v)", failover, r.st)
	}
	if locktest.IsClosed(r.f.l.Done()) {
		t.Errorf("follower: its term ended: %v", r.f.l.(interface{ Err() error }).Err())
	}
	r.tp.leave(fh, stillHeld)
	if err := r.f.l.Unlock(r.f.ctx(r.ctx)); err != nil {
		t.Errorf("follower: Resign: %v", err)
	}
	holds, double, belief := checkHistory(t, r.tp, r.v, r.path)
	left := nodesLeft(t, r.admin, r.v, r.path, r.st+2*time.Second)
	report{fault: "election-failover-" + r.how, variant: r.v.name, holds: holds, double: double, left: left,
		recover: failover, belief: belief, extra: append([]string{
			"session=" + r.st.String(),
			fmt.Sprintf("ratio=%.2f", failover.Seconds()/r.st.Seconds()),
			fmt.Sprintf("ratio_last=%.2f", (elected-lastRequest).Seconds()/r.st.Seconds()),
		}, extra...)}.log(t)
}

// loseClosed: the leader's process closes its session as it ends.
func loseClosed(r *failoverRun) {
	t := r.t
	l := newClient(t, r.tp, r.v, r.path, "leader", withTimeout(r.st))
	if err := l.l.Lock(l.ctx(r.ctx)); err != nil {
		t.Fatalf("leader: Campaign: %v", err)
	}
	lh := r.tp.enter(l)
	r.queue()
	lastRequest := r.tp.now()
	if _, err := l.conn.Sync(r.path); err != nil {
		t.Fatal(err)
	}
	faultAt := r.tp.now()
	r.tp.leave(lh, stillHeld) // the process stops acting as leader, and exits
	l.conn.Close()
	elected, fh := r.elected()
	// Had the servers waited for the session to expire, the follower
	// could not lead before a session timeout after the last request.
	if elected >= lastRequest+r.st-clockSlack {
		t.Errorf("the follower led %v after the close, as late as an expiry: the close did not end the session", elected-faultAt)
	}
	r.finish(faultAt, lastRequest, faultAt, elected, fh)
}

// loseChild: the leader is a process of its own (the pause test's
// holder, campaigning as the election variant), killed or frozen.
func loseChild(r *failoverRun, freeze bool) {
	t := r.t
	storePath := filepath.Join(t.TempDir(), "store.json")
	store, err := fence.Create(storePath, fence.Fenced)
	if err != nil {
		t.Fatal(err)
	}
	a := startChild(t, r.v, r.path, storePath, r.st)
	locked := a.next(t, "locked", 30*time.Second)
	aEnter := r.tp.now()
	lastRequest := r.tp.at(time.Unix(0, locked.SyncSent))
	r.queue()
	sig := syscall.SIGKILL
	if freeze {
		sig = syscall.SIGSTOP
	}
	faultAt := r.tp.now()
	if err := a.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	elected, fh := r.elected()
	earliest := lastRequest + r.v.minHold(r.st)
	// The leader's term as the servers ended it, at the soonest.
	r.tp.mu.Lock()
	r.tp.holds = append(r.tp.holds, &holdRec{c: &client{name: "leader", path: r.path}, token: locked.Token,
		enter: aEnter, exit: max(aEnter, earliest), done: stillHeld})
	r.tp.mu.Unlock()
	if term := r.f.l.Token(); term <= locked.Token {
		t.Errorf("the follower's term %d is not after the leader's %d", term, locked.Token)
	}
	if !freeze {
		r.finish(faultAt, lastRequest, earliest, elected, fh)
		return
	}
	// Thawed, the old leader writes under its old term, as a process
	// frozen just before its write does.
	if err := store.Write(r.f.l.Token(), "follower", "the new leader's update"); err != nil {
		t.Fatalf("follower: write: %v", err)
	}
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	res := a.next(t, "resumed", r.st+20*time.Second)
	if !res.WriteStale {
		t.Errorf("the old leader's write after the pause: %q; want %v", res.WriteErr, fence.ErrStaleToken)
	}
	doneAfter := time.Duration(res.DoneAfterNs)
	switch {
	case res.DoneAtResume:
		doneAfter = 0
	case res.DoneAfterNs < 0:
		t.Errorf("the old leader: Done still open %v after it resumed", r.st+2*time.Second)
	case doneAfter > lossSlack:
		t.Errorf("the old leader: Done closed %v after it resumed; want at once (within %v)", doneAfter, lossSlack)
	}
	if !res.UnlockLost {
		t.Errorf("the old leader: Resign after the pause: %q; want %v or %v", res.UnlockErr, zklocks.ErrLockLost, zklocks.ErrNotLocked)
	}
	r.finish(faultAt, lastRequest, earliest, elected, fh,
		"done_after_resume="+doneAfter.Round(time.Millisecond).String(), "stale_write=rejected")
}

// losePartitioned: the leader's client is cut off; nothing arrives,
// nothing leaves.
func losePartitioned(r *failoverRun) {
	losePartitionedBy(r, []clientOpt{withCutter()},
		func(l *client) { l.cut.Silence() }, func(l *client) { l.cut.Heal() })
}

// losePartitionedBy is losePartitioned with the leader's client made
// with opts, cut off by cut and healed by heal.
func losePartitionedBy(r *failoverRun, opts []clientOpt, cut, heal func(l *client)) {
	t := r.t
	l := newClient(t, r.tp, r.v, r.path, "leader", append([]clientOpt{withTimeout(r.st)}, opts...)...)
	if err := l.l.Lock(l.ctx(r.ctx)); err != nil {
		t.Fatalf("leader: Campaign: %v", err)
	}
	lh := r.tp.enter(l)
	sid := l.conn.SessionID()
	doneL := make(chan time.Duration, 1)
	go func(done <-chan struct{}) { <-done; doneL <- r.tp.now() }(l.l.Done())
	r.queue()
	lastRequest := r.tp.now()
	if _, err := l.conn.Sync(r.path); err != nil {
		t.Fatal(err)
	}
	faultAt := r.tp.now()
	cut(l)
	elected, fh := r.elected()
	var lDone time.Duration
	select {
	case lDone = <-doneL:
	case <-time.After(r.st + tick + lossSlack):
		t.Fatalf("leader: Done still open %v after the cut (session timeout %v)", r.tp.now()-faultAt, r.st)
	}
	if lDone > elected {
		t.Errorf("leader: Done closed %v after the follower led; want before", lDone-elected)
	}
	// Healed, the old leader finds its session gone and its term over.
	heal(l)
	waitSessionEnded(t, l, sid, 20*time.Second)
	r.tp.leave(lh, lDone)
	if err := l.l.Unlock(l.ctx(r.ctx)); !errors.Is(err, zklocks.ErrLockLost) && !errors.Is(err, zklocks.ErrNotLocked) {
		t.Errorf("leader: Resign after its session expired: %v; want %v or %v", err, zklocks.ErrLockLost, zklocks.ErrNotLocked)
	}
	r.finish(faultAt, lastRequest, lastRequest+r.v.minHold(r.st), elected, fh,
		"done_after_cut="+(lDone-faultAt).Round(time.Millisecond).String(),
		"done_before_new_leader="+(elected-lDone).Round(time.Millisecond).String())
}
