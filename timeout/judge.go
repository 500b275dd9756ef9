package timeout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
)

// This file is the waiters' side of the lease (docs/04-timeout.md,
// "Judging expiry with ZooKeeper's clock" and "Eviction is a
// compare-and-set"). It carries the judge's half of the chapter's "Why a
// judge never evicts a live holder: the four cases": the head's lease runs from
// our first probe after we saw it unstamped at the head (the first
// case), from its last "held" write when this leader stamped it (the
// second), from our first probe under this leader when an earlier one
// stamped it (the third), and a head stamped by a later leader than our
// probe is not judged (the fourth). Local time only guesses when to look.

// Timing of the waiters' side.
const (
	// relistSoon is the hook's answer when the head has just gone: a
	// waiter second in line is woken by its watch on the head anyway; one
	// further back lists the queue again after this pause to find the new
	// head, which it has to judge too.
	relistSoon = 20 * time.Millisecond
	// retryAfter is the pause after a request failed for want of a
	// connection.
	retryAfter = 100 * time.Millisecond
)

// judge is the waiting side of one Lock call: the recipe passes its hook
// to the queue's wait.
type judge struct {
	m      *Mutex
	own    ownNode   // our node, which the probes write
	joined time.Time // local time just before our create was sent (see stamp)

	// offset is a lower bound of ZooKeeper's clock minus ours, in ms,
	// learnt from timestamps we read: one read at local time t was
	// stamped before t. It only guesses when to look next.
	offset int64

	head   string
	since  int64 // ZooKeeper ms, not before head became the head; 0: unknown
	graced bool  // head, not yet stamped, was given a renewal interval to stamp

	// epoch is the leader epoch of our last probe, epochSince the
	// ZooKeeper time of our first probe in it: two mtimes are comparable
	// only when one leader's clock wrote both.
	epoch, epochSince int64

	renewal *renewal // our hold's, once stamp has begun it
}

func newJudge(m *Mutex) *judge {
	return &judge{m: m, joined: m.clock.Now(), offset: math.MinInt64}
}

// hook is the lockq.WhileWaiting that judges the head's lease. Only the
// first waiter that speaks leases judges (docs/04-timeout.md, "Judging
// expiry with ZooKeeper's clock", who judges). One behind a waiting
// lease speaker still looks at the queue once per that one's lease: a
// handoff wakes only the new holder, so our predecessor may have become
// the head unheard, and if it stalls before its record nobody else
// would judge it. A predecessor whose node says "held" is the head
// already.
func (j *judge) hook(ctx context.Context, w lockq.Wait) (time.Duration, error) {
	head := w.Head
	if !w.Second {
		switch pred, ok := DecodeLease(w.PredData); {
		case ok && !pred.Held:
			return pred.Length, nil // the waiter ahead of us judges
		case ok:
			head = w.Pred
		}
	}
	if w.Self != j.own.path { // created with version 0, and only we write it
		j.own = ownNode{m: j.m, path: w.Self, known: true}
	}
	if head != j.head {
		j.head, j.since, j.graced = head, 0, false
	}

	// The watch's read of our predecessor is as fresh as the watch: when
	// the predecessor is the head, it costs nothing to look at.
	data, st := w.PredData, w.PredStat
	if head != w.Pred || st == nil {
		var err error
		if data, st, err = j.m.base.Client.Get(ctx, head); err != nil {
			return j.failed(ctx, "read the head", err, true)
		}
	}
	j.observe(st.Mtime)
	rec, ok := DecodeLease(data)
	guess := j.since // our local guess of the lease's start, which decides nothing
	if rec.Held {
		guess = st.Mtime
	}
	switch {
	case !ok:
		return j.m.idlePoll(), nil // no lease to judge; look again later
	case guess == 0 && !j.graced:
		// Not stamped yet: a live head stamps as soon as it holds. Give
		// it a renewal interval before the first probe, a quorum write.
		j.graced = true
		return rec.Length / renewalsPerLease, nil
	case guess != 0:
		if due := guess + rec.Length.Milliseconds() - j.zkNowAtLeast(); due > 0 {
			return time.Duration(due) * time.Millisecond, nil
		}
	}
	return j.decide(ctx)
}

// decide asks ZooKeeper for the present, and evicts the head if its lease
// has run out by then. It writes our own node so that the ensemble stamps
// the present (the probe), then reads the head: this order makes the
// head's stat at least as new as the probe.
func (j *judge) decide(ctx context.Context) (time.Duration, error) {
	probe, err := j.own.write(ctx, encodeLease(j.m.lease, false), probeWrite)
	if err != nil {
		return j.failed(ctx, "write our node", err, false)
	}
	p := probe.Mtime
	j.offset = p - j.m.clock.Now().UnixMilli() // the freshest bound, after a jump of our clock too
	j.enterEpoch(epochOf(probe.Mzxid), p)
	data, st, err := j.m.base.Client.Get(ctx, j.head)
	if err != nil {
		return j.failed(ctx, "read the head", err, true)
	}
	rec, ok := DecodeLease(data)
	if !ok {
		return j.m.idlePoll(), nil
	}
	if j.since == 0 {
		j.since = p // p follows the listing that showed this head
	}
	start, comparable := j.start(rec.Held, st)
	if !comparable {
		return relistSoon, nil
	}
	lease := rec.Length.Milliseconds()
	if due := start + lease - p; due > 0 {
		return time.Duration(due) * time.Millisecond, nil
	}

	// Expired by ZooKeeper's clock. The versioned delete succeeds only if
	// the head has not renewed since the read above, and only for one of
	// the waiters that race to do it.
	countWrite(j.m, evictWrite)
	err = j.m.base.Client.Delete(ctx, j.head, st.Version)
	switch {
	case err == nil:
		j.m.evictions.Add(1)
		j.m.base.Log.Evict(ctx, j.own.path, j.head, st.Czxid, rec.Length, time.Duration(p-start-lease)*time.Millisecond)
		return relistSoon, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return relistSoon, nil // released, renewed or evicted by another
	}
	return j.failed(ctx, "evict the head", err, true)
}

// start returns the ZooKeeper time the head's lease runs from (the cases
// in the file comment; 0 while we know no time since it became the head).
// ok is false in the fourth case: probe again.
func (j *judge) start(held bool, head *zk.Stat) (start int64, ok bool) {
	switch e := epochOf(head.Mzxid); {
	case held && e == j.epoch:
		return head.Mtime, true
	case held && e > j.epoch:
		return 0, false
	case held:
		// The head has not renewed in this epoch (its stat would say
		// so), so its last renewal came before our first probe in it.
		return j.epochSince, true
	}
	return j.since, true
}

// enterEpoch records that our probe at ZooKeeper time p was stamped in
// leader epoch e. A new epoch restarts every lower bound taken from an
// older leader's clock.
func (j *judge) enterEpoch(e, p int64) {
	if e != j.epoch {
		j.epoch, j.epochSince, j.since = e, p, 0
	}
}

// epochOf is the leader epoch in a zxid: its high 32 bits.
func epochOf(zxid int64) int64 { return zxid >> 32 }

// observe learns from a ZooKeeper timestamp just read.
func (j *judge) observe(zkMs int64) { j.offset = max(j.offset, zkMs-j.m.clock.Now().UnixMilli()) }

// zkNowAtLeast is our guess of ZooKeeper's clock now: a lower bound while
// both clocks tick alike.
func (j *judge) zkNowAtLeast() int64 { return j.m.clock.Now().UnixMilli() + j.offset }

// idlePoll is how long a waiter waits before it looks at a head that
// declares no lease again: that head may leave and a head with a lease
// take its place without our predecessor changing.
func (m *Mutex) idlePoll() time.Duration {
	if m.lease > 0 {
		return m.lease
	}
	return m.base.Session.Timeout()
}

// failed decides what a failed request means for the wait; onHead says
// whether it was a request about the head's node or our own.
func (j *judge) failed(ctx context.Context, what string, err error, onHead bool) (time.Duration, error) {
	switch {
	case ctx.Err() != nil:
		// Whatever the request said, the caller gave up: say that. (A
		// head that left just as ctx ended once came out as NoNode.)
		return 0, ctx.Err()
	case errors.Is(err, zk.ErrSessionExpired):
		return 0, fmt.Errorf("%w: %s: %w", zklocks.ErrLockLost, what, hold.ErrSessionExpired)
	case errors.Is(err, zk.ErrNoNode) && onHead:
		return relistSoon, nil // the head left: the queue is listed again
	case errors.Is(err, zk.ErrNoNode):
		return 0, fmt.Errorf("%w: %s: our node is gone: %w", zklocks.ErrLockLost, what, err)
	case errors.Is(err, zk.ErrBadVersion):
		return relistSoon, nil // the version is read again before the next probe
	case zkop.Transient(err):
		return retryAfter, nil
	}
	return 0, fmt.Errorf("lease check: %s: %w", what, err)
}
