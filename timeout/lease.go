package timeout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
)

// The lease record. A contender's node carries its lease as ASCII text:
//
//	lease=<milliseconds>ms        while it waits in the queue
//	lease=<milliseconds>ms held   from the holder's first stamp on
//
// The "held" form is written only by the holder, so the mtime of a node
// that says "held" is the ZooKeeper time of a renewal made while it held
// the lock. A node with any other data (empty, Curator's, kazoo's, a
// sequential.Mutex's) declares no lease and is never evicted.
const (
	leaseKey  = "lease="
	leaseUnit = "ms"
	heldMark  = "held"
)

// encodeLease returns the node data for a lease of d, nil for no lease.
func encodeLease(d time.Duration, held bool) []byte {
	if d <= 0 {
		return nil
	}
	s := leaseKey + strconv.FormatInt(d.Milliseconds(), 10) + leaseUnit
	if held {
		s += " " + heldMark
	}
	return []byte(s)
}

// parseLease reads node data written by encodeLease. ok is false for data
// that declares no lease.
func parseLease(data []byte) (lease time.Duration, held, ok bool) {
	f := strings.Fields(string(data))
	if len(f) < 1 || len(f) > 2 {
		return 0, false, false
	}
	v, found := strings.CutPrefix(f[0], leaseKey)
	if !found {
		return 0, false, false
	}
	if v, found = strings.CutSuffix(v, leaseUnit); !found {
		return 0, false, false
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return 0, false, false
	}
	if len(f) == 2 {
		if f[1] != heldMark {
			return 0, false, false
		}
		held = true
	}
	return time.Duration(ms) * time.Millisecond, held, true
}

// Timing of the holder's side.
const (
	// renewalsPerLease: the holder renews every lease/renewalsPerLease, so
	// two renewals in a row may fail before the lease is in danger.
	renewalsPerLease = 3
	// giveUpShare and giveUpFloor: the holder gives its hold up when it
	// has not renewed for lease - max(lease/giveUpShare, giveUpFloor) of
	// its own time. The share covers clocks that tick at slightly
	// different rates; the floor covers ZooKeeper's millisecond
	// timestamps and a late timer (the scheduler's 10ms time slice under
	// a CPU hog, a GC pause), which do not shrink with the lease. So the
	// holder stops believing before any waiter can evict it.
	giveUpShare = 20
	giveUpFloor = 20 * time.Millisecond
)

// leaseHold is the lease side of one hold: it stamps the node on
// acquisition, renews it, and ends the hold when a renewal shows it was
// lost or when it could not renew in time.
type leaseHold struct {
	m     *Mutex
	node  *lockq.Node
	log   *oplog.Hold // nil when off
	path  string      // our node's
	data  []byte      // encodeLease(lease, true)
	lease time.Duration

	ver     ver   // our node's data version, owned by the renewal goroutine
	session int64 // the session that holds the node

	// lastOK is the local send time of the last renewal that succeeded;
	// before the first, a moment before the hold began (checker.joined).
	lastOK  time.Time
	stamped bool // the "held" record has been written

	ctx    context.Context // cancelled by stop (Unlock)
	cancel context.CancelFunc
	done   chan struct{} // closed when the hold ends, err set before
	err    error         // nil: released by Unlock
	exited chan struct{}
}

// ver tracks the data version of one of our own nodes. Only we write our
// node, so the version after our last write is the node's version, unless
// a write's outcome was lost with the connection: then known is false and
// the next write reads the version first.
type ver struct {
	v     int32
	known bool
}

// stamp writes the "held" record before Lock returns, for a contender
// that waited so long that its lease, counted from before its create,
// would leave too little (Mutex.stamp); the lease then runs from this
// write's send time.
//
// A connection that goes while the stamp is on its way does not cost the
// hold: the write is tried again a few times (write re-reads the version
// first, since the lost write may have been applied), for about a second
// when requests fail at once, longer in an outage.
func (h *leaseHold) stamp(ctx context.Context) error {
	pause := 20 * time.Millisecond
	for tries := 1; ; tries++ {
		// Nothing is sent on a closed connection (zkop.AwaitSession).
		err := h.m.base.Client.AwaitSession(ctx, zkop.DialRound)
		if err == nil {
			sent := h.m.now()
			if err = h.write(ctx, &h.m.stamps); err == nil {
				h.lastOK, h.stamped = sent, true
				return nil
			}
		}
		if !zkop.Transient(err) || tries == stampTries || ctx.Err() != nil {
			return err
		}
		if zkop.Sleep(ctx, pause) != nil {
			return err
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// stampTries bounds stamp's attempts.
const stampTries = 6

// write is one versioned setData of our node, resynchronising the version
// first when the last write's outcome is unknown. sent counts the setData.
func (h *leaseHold) write(ctx context.Context, sent *atomic.Int64) error {
	if !h.ver.known {
		// Synced: the write we are unsure of may not have reached the
		// server we talk to now, and a stale version would fail the next
		// write with BadVersion, which reads as an eviction.
		_, stat, err := h.m.base.Client.GetSynced(ctx, h.path)
		if err != nil {
			return err
		}
		if sid := h.m.base.Session.Conn().SessionID(); stat.EphemeralOwner != sid {
			return fmt.Errorf("%w: %s belongs to session %#x, ours is %#x", hold.ErrSessionExpired, h.path, stat.EphemeralOwner, sid)
		}
		h.ver = ver{stat.Version, true}
	}
	stat, err := h.m.base.Client.SetCounted(ctx, h.path, h.data, h.ver.v, sent)
	if err != nil {
		if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			h.ver.known = false // it may or may not have been applied
		}
		return err
	}
	h.ver.v = stat.Version
	return nil
}

// giveUpAt is the local time at which the holder stops believing in its
// hold unless a renewal succeeds first.
func (h *leaseHold) giveUpAt() time.Time { return h.lastOK.Add(h.lease - giveUpMargin(h.lease)) }

// giveUpMargin is how much of a lease the holder keeps in hand.
func giveUpMargin(lease time.Duration) time.Duration { return max(lease/giveUpShare, giveUpFloor) }

// run writes the "held" record if stamp left it, then renews the lease
// until Unlock stops it or the hold ends.
func (h *leaseHold) run() {
	defer close(h.exited)
	first := h.lease / renewalsPerLease
	if !h.stamped {
		first = 0 // the "held" record, at once
	}
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-h.ctx.Done(): // Unlock
			h.end(nil)
			return
		case <-h.node.Monitor().Done():
			h.end(h.m.monitorLoss(h.node))
			return
		case <-timer.C:
		}
		if !h.m.waitUnpaused(h.ctx, h.node.Monitor().Done()) {
			continue // stopped or lost while paused: the select says which
		}
		next, lost := h.renew()
		if lost != nil {
			h.end(lost)
			if !isClosed(h.node.Monitor().Done()) { // else Unlock's release of the queue deletes it
				h.release()
			}
			return
		}
		timer.Reset(next)
	}
}

// renew makes one renewal attempt. It returns when to renew next, or why
// the hold is lost.
func (h *leaseHold) renew() (next time.Duration, lost error) {
	every := h.lease / renewalsPerLease
	giveUpAt := h.giveUpAt()
	left := giveUpAt.Sub(h.m.now())
	if left <= 0 {
		return 0, fmt.Errorf("%w (%w): no renewal for %v",
			zklocks.ErrLockLost, ErrLeaseExpired, h.m.now().Sub(h.lastOK).Round(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(h.ctx, left)
	defer cancel()
	// A renewal can wait long for a connection (a dial or handshake that
	// stalls); the sequential hold's monitor may give the hold up first,
	// and Done must close then, not when the renewal gives up.
	go func() {
		select {
		case <-h.node.Monitor().Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	counter := &h.m.renewals
	if !h.stamped {
		counter = &h.m.stamps
	}
	sent := h.m.now()
	err := h.write(ctx, counter)
	switch {
	case err == nil:
		h.lastOK, h.stamped = sent, true
		return every, nil
	case h.ctx.Err() != nil:
		return every, nil // Unlock: the loop ends at its next select
	case isClosed(h.node.Monitor().Done()):
		return 0, h.m.monitorLoss(h.node)
	}
	if lost := renewalLoss(err, h.m.base.Session.Conn().SessionID() != h.session); lost != nil {
		return 0, lost
	}
	// Connection trouble or a slow answer: try again soon, and no later
	// than the give-up time, so that the hold ends on time if the
	// connection does not come back.
	return max(min(every/renewalsPerLease, giveUpAt.Sub(h.m.now())), time.Millisecond), nil
}

// renewalLoss says what a failed renewal means: the hold's loss, or nil
// for "try again". Our node gone or written by another client is an
// eviction, unless the connection has a new session: the node went with
// the old one.
func renewalLoss(err error, sessionChanged bool) error {
	switch {
	case sessionChanged || errors.Is(err, hold.ErrSessionExpired) || errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: renewal: %w", zklocks.ErrLockLost, hold.ErrSessionExpired)
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w (%w): renewal found the node gone: %w", zklocks.ErrLockLost, ErrEvicted, err)
	case errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("%w (%w): another client wrote our node: %w", zklocks.ErrLockLost, ErrEvicted, err)
	}
	return nil
}

// end ends the hold: reason nil for a release, else why it was lost.
func (h *leaseHold) end(reason error) {
	h.err = reason
	close(h.done) // first: a slow log handler must not delay Done
	if reason != nil {
		h.log.Lost(context.Background(), reason)
	}
}

// release deletes our node after we gave the hold up ourselves, so the next
// contender need not wait for an eviction. Any version may go, without a
// read first: the node's name carries our acquisition's GUID, so it can
// name no one else's node (see the sequential lock's Unlock). If the
// ensemble cannot be reached, the delete goes on in the background until
// the node or the session is gone (zkop.DeleteLater, which does read
// first and deletes only a node of this session).
func (h *leaseHold) release() {
	ctx, cancel := context.WithTimeout(context.Background(), h.lease)
	defer cancel()
	h.m.drops.Add(1)
	err := h.m.base.Client.Delete(ctx, h.path, -1)
	if err != nil && (zkop.Transient(err) || ctx.Err() != nil) {
		h.m.base.Client.DeleteLater(h.path, -1)
	}
}

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
