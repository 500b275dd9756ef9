package timeout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
)

// This file is the holder's side of the lease (the package doc's "The
// holder's side"): the first stamp, the renewals every lease/3, and the
// giving up a margin before any waiter may evict. It carries the holder's
// half of "Why a judge never evicts a live holder": the holder stops
// believing, by its own clock, before a lease has run out by ZooKeeper's.

// Timing of the holder's side.
const (
	// renewalsPerLease: the holder renews every lease/renewalsPerLease, so
	// two renewals in a row may fail before the lease is in danger.
	renewalsPerLease = 3
	// giveUpShare and giveUpFloor: the holder gives its hold up when it
	// has not renewed for lease - max(lease/giveUpShare, giveUpFloor) of
	// its own time. The share covers clocks that tick at slightly
	// different rates; the floor covers a late timer, which does not
	// shrink with the lease: with GOMAXPROCS=1, goroutines that never
	// yield and a busy host, Done was seen to close up to 110ms late
	// (TestSilencedHolderUnderACPUHogGivesUpBeforeEviction failed with a
	// 20ms floor). So the holder stops believing before any waiter can
	// evict it, unless its process stalls for longer than the floor.
	giveUpShare = 20
	giveUpFloor = 100 * time.Millisecond
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
	var b zkop.Backoff
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
		if b.Sleep(ctx) != nil {
			return err
		}
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
		if !h.m.gate.wait(h.ctx, h.node.Monitor().Done()) {
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
