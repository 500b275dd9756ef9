package timeout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
)

// This file is the waiters' side of the lease (the package doc's
// "Judging expiry with ZooKeeper's clock" and "Eviction is a
// compare-and-set"): the first waiter that speaks leases judges the head
// of the queue by ZooKeeper's timestamps alone and evicts it with a
// versioned delete. It carries the waiter's half of "Why a judge never
// evicts a live holder": only ZooKeeper's clock decides, local time only
// guesses when to look.

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

// checker is the waiters' half of the lease: the sequential lock calls its
// hook whenever this contender is about to wait, and the hook decides, with
// ZooKeeper's clock alone, whether the head of the queue has let its lease
// run out, evicting it if so. One checker serves one Lock call.
//
// Local time is used for one thing only: to guess when to look next. The
// guess rests on offset, a lower bound of (ZooKeeper's clock - ours)
// learnt from timestamps we read: a timestamp read at local time t was
// stamped before t. A wrong guess (a skewed or jumping local clock, a
// leader change) makes us look too early or too late, never evict early.
type checker struct {
	m    *Mutex
	data []byte // our node's data (our own lease, waiting form)

	self string
	ver  ver

	anchored bool
	offset   int64 // ms; ZooKeeper time >= local time + offset

	head   string
	since  int64 // ZooKeeper ms, not before head became the head; 0: unknown
	graced bool  // head, unstamped, was given a renewal interval to stamp

	// joined is our local time just before our create was sent. Our node
	// cannot be the head before it exists, so it is a moment before we
	// could hold: the lease of our hold may run from it (see stamp).
	joined time.Time

	// epoch is the leader epoch of our last probe (the high 32 bits of
	// its zxid), epochSince the ZooKeeper time of our first probe in it.
	// Two mtimes are comparable only when one leader's clock wrote both.
	epoch, epochSince int64

	lease *leaseHold // the hold's lease, once stamped (Mutex.stamp)
}

// hook is the lockq.WhileWaiting that judges the head's lease.
//
// Only the first waiter in the queue that speaks leases judges: the one
// right behind the head, or one whose predecessor declares no lease (a
// sequential, Curator or kazoo contender, which would never judge). A
// waiter behind a waiting lease speaker leaves it to that one: the head
// is judged by one waiter, whatever the length of the queue. It looks at
// the queue again after one of its predecessor's leases, though: a
// handoff wakes only the new holder, so our predecessor may have become
// the head without our hearing of it, and, if it stalls before its
// stamp, nobody would judge it. A predecessor whose node says "held" is
// the head already (the head we listed is gone): judge it. A judge that stalls with its session
// alive holds eviction up until its session expires and the one behind
// it takes its place. Fewer judges can only evict later, never earlier.
func (c *checker) hook(ctx context.Context, w lockq.Wait) (time.Duration, error) {
	head, self := w.Head, w.Self
	if !w.Second {
		lease, held, speaks := parseLease(w.PredData)
		switch {
		case speaks && !held:
			return lease, nil // the waiter ahead of us judges (or leaves it to one ahead of it)
		case held:
			head = w.Pred
		}
	}
	if self != c.self {
		// Our node was created with version 0, and only we write it.
		c.self, c.ver, c.anchored = self, ver{0, true}, false
	}
	if head != c.head {
		c.head, c.since, c.graced = head, 0, false
	}

	// The watch's read of our predecessor is as fresh as the watch: when
	// the predecessor is the head, it costs nothing to look at.
	data, st := w.PredData, w.PredStat
	if head != w.Pred || st == nil {
		var err error
		if data, st, err = c.m.base.Client.Get(ctx, c.head); err != nil {
			return c.failed(ctx, "read the head", err, true)
		}
	}
	c.observe(st.Mtime)
	lease, held, ok := parseLease(data)
	if !ok {
		return c.m.idlePoll(), nil // no lease to judge; look again later
	}
	start := c.guessStart(held, st)
	if start == 0 && !c.graced {
		// A head that has not stamped yet: a live one stamps as soon as it
		// holds. Give it a renewal interval before the first probe, which
		// is a quorum write.
		c.graced = true
		return lease / renewalsPerLease, nil
	}
	if start != 0 {
		if due := start + lease.Milliseconds() - c.zkNowAtLeast(); due > 0 {
			return time.Duration(due) * time.Millisecond, nil
		}
	}

	// The head looks expired to our local guess: ask ZooKeeper. Write our
	// own node so the ensemble stamps the present, then read the head:
	// this order makes the head's stat at least as new as our stamp.
	p, pe, err := c.probe(ctx)
	if err != nil {
		return c.failed(ctx, "write our node", err, false)
	}
	c.enterEpoch(pe, p)
	data, st, err = c.m.base.Client.Get(ctx, c.head)
	if err != nil {
		return c.failed(ctx, "read the head", err, true)
	}
	if lease, held, ok = parseLease(data); !ok {
		return c.m.idlePoll(), nil
	}
	if c.since == 0 {
		c.since = p // p follows the listing that showed this head
	}
	start, comparable := c.start(held, st)
	if !comparable {
		return relistSoon, nil
	}
	if due := start + lease.Milliseconds() - p; due > 0 {
		return time.Duration(due) * time.Millisecond, nil
	}

	// Expired by ZooKeeper's clock. The versioned delete succeeds only if
	// the head has not renewed since the read above, and only for one of
	// the waiters that race to do it.
	c.m.evictTries.Add(1)
	err = c.m.base.Client.Delete(ctx, c.head, st.Version)
	switch {
	case err == nil:
		c.m.evictions.Add(1)
		c.m.base.Log.Evict(ctx, c.self, c.head, st.Czxid, lease, time.Duration(p-start-lease.Milliseconds())*time.Millisecond)
		return relistSoon, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return relistSoon, nil // released, renewed or evicted by another
	}
	return c.failed(ctx, "evict the head", err, true)
}

// start returns the ZooKeeper time the head's lease runs from: its last
// stamp if it holds and has stamped, else the earliest time we know it
// has been the head (0 when we do not know one yet). ok is false when the
// head's last stamp comes from a newer leader than our probe (the probe
// was answered before a leader change, the read after it): the two times
// come from two clocks, and ours is the older. Probe again.
func (c *checker) start(held bool, head *zk.Stat) (start int64, ok bool) {
	switch e := epochOf(head.Mzxid); {
	case held && e == c.epoch:
		return head.Mtime, true
	case held && e > c.epoch:
		return 0, false
	case held:
		// Stamped under an earlier leader, by that leader's clock, which
		// need not agree with this one's. The head has not renewed in
		// this epoch (its stat would say so), so its last renewal came
		// before our first probe in it: count from there.
		return c.epochSince, true
	}
	return c.since, true
}

// guessStart is start for our local guess of when to look next, which
// decides nothing: the head's last stamp as it reads, whichever leader's.
func (c *checker) guessStart(held bool, head *zk.Stat) int64 {
	if held {
		return head.Mtime
	}
	return c.since
}

// enterEpoch records that our probe at ZooKeeper time p was stamped in
// leader epoch e. A new epoch restarts every lower bound taken from an
// older leader's clock.
func (c *checker) enterEpoch(e, p int64) {
	if e != c.epoch {
		c.epoch, c.epochSince, c.since = e, p, 0
	}
}

// epochOf is the leader epoch in a zxid: its high 32 bits.
func epochOf(zxid int64) int64 { return zxid >> 32 }

// probe writes our own node and returns the ZooKeeper time of the write
// and the leader epoch that stamped it.
func (c *checker) probe(ctx context.Context) (mtime, epoch int64, err error) {
	if !c.ver.known {
		if _, err := c.readSelf(ctx); err != nil {
			return 0, 0, err
		}
	}
	st, err := c.m.base.Client.SetCounted(ctx, c.self, c.data, c.ver.v, &c.m.probes)
	if err != nil {
		c.ver.known = false
		return 0, 0, err
	}
	c.ver.v = st.Version
	c.offset, c.anchored = st.Mtime-c.m.now().UnixMilli(), true // freshest anchor
	return st.Mtime, epochOf(st.Mzxid), nil
}

// readSelf reads our node and learns its version. After a probe whose
// answer was lost it syncs first: the member we talk to now may not have
// applied that probe, and its older version would fail our next write,
// the "held" stamp included, with BadVersion.
func (c *checker) readSelf(ctx context.Context) (*zk.Stat, error) {
	get := c.m.base.Client.Get
	if !c.ver.known && c.anchored {
		get = c.m.base.Client.GetSynced
	}
	_, st, err := get(ctx, c.self)
	if err != nil {
		return nil, err
	}
	c.ver = ver{st.Version, true}
	return st, nil
}

// observe learns from a ZooKeeper timestamp just read.
func (c *checker) observe(zkMs int64) {
	if off := zkMs - c.m.now().UnixMilli(); !c.anchored || off > c.offset {
		c.offset, c.anchored = off, true
	}
}

// zkNowAtLeast is our guess of ZooKeeper's clock now: a lower bound while
// both clocks tick alike.
func (c *checker) zkNowAtLeast() int64 { return c.m.now().UnixMilli() + c.offset }

// failed decides what a failed request means for the wait; onHead says
// whether it was a request about the head's node or our own.
func (c *checker) failed(ctx context.Context, what string, err error, onHead bool) (time.Duration, error) {
	switch {
	case ctx.Err() != nil:
		// Whatever the request said, the caller gave up: say that. (A
		// head that left just as ctx ended once came out as NoNode.)
		return 0, ctx.Err()
	case errors.Is(err, zk.ErrSessionExpired):
		return 0, fmt.Errorf("%w: %s: %w", zklocks.ErrLockLost, what, hold.ErrSessionExpired)
	case errors.Is(err, zk.ErrNoNode) && onHead:
		return relistSoon, nil // the head left: the sequential lock lists again
	case errors.Is(err, zk.ErrNoNode):
		return 0, fmt.Errorf("%w: %s: our node is gone: %w", zklocks.ErrLockLost, what, err)
	case errors.Is(err, zk.ErrBadVersion):
		return relistSoon, nil // version re-read on the next call
	case zkop.Transient(err):
		return retryAfter, nil
	}
	return 0, fmt.Errorf("lease check: %s: %w", what, err)
}
