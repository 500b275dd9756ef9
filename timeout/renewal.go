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

// This file is the holder's side of the lease (docs/04-timeout.md, "The
// holder's side"). It carries the holder's half of every case of the
// chapter's "Why a judge never evicts a live holder: the four cases":
// the holder stops believing in its hold at G = lastOK + lease - margin
// by its own clock, where lastOK is the send time of its last write
// that landed, or, before its record lands, the moment before its
// create was sent (the first case); a judge counts from a ZooKeeper
// time after that (the other cases).

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
	// yield and a busy host, Done was seen to close about 110ms after it
	// was due (TestSilencedHolderUnderACPUHogGivesUpBeforeEviction failed
	// with a 20ms floor, the holder believing 89ms after the handover).
	// The floor is about twice that. So the holder stops believing before
	// any waiter can evict it, unless its process stalls for longer.
	giveUpShare = 20
	giveUpFloor = 200 * time.Millisecond
	// stampTries bounds the attempts of a record written before Lock
	// returns.
	stampTries = 6
)

// renewal keeps the lease of one hold: it writes the "held" record,
// renews it every lease/3, and ends the hold (hold.Monitor.Lose) when a
// write shows the hold was lost or when none has landed in time. It stops
// when the hold ends, by Unlock or by a loss the monitor saw.
type renewal struct {
	m       *Mutex
	node    *lockq.Node
	own     ownNode
	session int64     // the session that holds the node
	lastOK  time.Time // see the file comment
	stamped bool      // the "held" record has landed
	exited  chan struct{}
}

// stamp begins the lease of the hold on node n, when there is one, and
// leaves its renewal in j. The lease runs from j.joined, taken before our
// create was sent, until the record lands. While that leaves the hold
// more than a renewal interval, Lock returns at once and the record goes
// out in the background, off the handoff's path; a contender that waited
// longer writes the record before Lock returns.
func (m *Mutex) stamp(ctx context.Context, n *lockq.Node, j *judge) error {
	if m.lease == 0 {
		return nil
	}
	r := &renewal{m: m, node: n, own: j.own, session: m.base.Client.Conn.SessionID(),
		lastOK: j.joined, exited: make(chan struct{})}
	if r.own.path != n.Path() { // we never probed: the node is as created
		r.own = ownNode{m: m, path: n.Path(), known: true}
	}
	r.own.mon = n.Monitor()
	if r.giveUpAt().Sub(m.clock.Now()) <= m.lease/renewalsPerLease {
		if err := r.stampNow(ctx); err != nil {
			return err
		}
	}
	j.renewal = r
	go r.run()
	return nil
}

// stampNow writes the record before Lock returns. A connection that goes
// while it is on its way does not cost the hold: it is tried again a few
// times (about a second when requests fail at once, longer in an outage).
func (r *renewal) stampNow(ctx context.Context) error {
	var b zkop.Backoff
	for {
		// Nothing is sent on a closed connection (zkop.AwaitSession).
		err := r.m.base.Client.AwaitSession(ctx, zkop.DialRound)
		if err == nil {
			if err = r.write(ctx); err == nil {
				return nil
			}
		}
		switch {
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion), errors.Is(err, hold.ErrSessionExpired):
			return fmt.Errorf("%w: stamping the lease: %w", zklocks.ErrLockLost, err)
		case !zkop.Transient(err) || b.Failures() == stampTries-1 || b.Sleep(ctx) != nil:
			return fmt.Errorf("stamping the lease: %w", err)
		}
	}
}

// write sends the "held" record (the first time) or a renewal of it,
// and moves lastOK to its send time once it has landed.
func (r *renewal) write(ctx context.Context) error {
	kind := renewalWrite
	if !r.stamped {
		kind = stampWrite
	}
	sent := r.m.clock.Now()
	if _, err := r.own.write(ctx, encodeLease(r.m.lease, true), kind); err != nil {
		return err
	}
	r.lastOK, r.stamped = sent, true
	return nil
}

// giveUpAt is the local time at which the holder stops believing in its
// hold unless a write lands first.
func (r *renewal) giveUpAt() time.Time { return r.lastOK.Add(r.m.lease - giveUpMargin(r.m.lease)) }

// giveUpMargin is how much of a lease the holder keeps in hand.
func giveUpMargin(lease time.Duration) time.Duration { return max(lease/giveUpShare, giveUpFloor) }

// run writes the record if stamp left it, then renews until the hold
// ends. When a renewal finds the hold lost, it ends it and deletes our
// node, so that the next contender need not wait for an eviction.
func (r *renewal) run() {
	defer close(r.exited)
	mon := r.node.Monitor()
	next := r.m.lease / renewalsPerLease
	if !r.stamped {
		next = 0 // the record, at once
	}
	for {
		select {
		case <-mon.Done(): // released, or lost as the monitor saw it
			return
		case <-r.m.clock.After(next):
		}
		var lost error
		if next, lost = r.renew(mon); lost != nil {
			if mon.Err() == nil { // the hold is still ours to end
				mon.Lose(lost)
				r.drop()
			}
			return
		}
	}
}

// renew makes one renewal attempt. It returns when to renew next, or why
// the hold is lost.
func (r *renewal) renew(mon *hold.Monitor) (next time.Duration, lost error) {
	every := r.m.lease / renewalsPerLease
	giveUpAt := r.giveUpAt()
	left := giveUpAt.Sub(r.m.clock.Now())
	if left <= 0 {
		return 0, fmt.Errorf("%w (%w): no renewal for %v",
			zklocks.ErrLockLost, ErrLeaseExpired, r.m.clock.Now().Sub(r.lastOK).Round(time.Millisecond))
	}
	// Bounded by the give-up time, and by the hold: a renewal that waits
	// long for a connection (a dial or handshake that stalls) must not
	// keep Unlock waiting once the monitor has ended the hold.
	ctx, cancel := context.WithTimeout(mon.Context(), left)
	defer cancel()
	err := r.write(ctx)
	if err == nil || mon.Err() != nil {
		return every, nil // after a release or the monitor's loss, run ends at its select
	}
	if lost := renewalLoss(err, r.m.base.Client.Conn.SessionID() != r.session); lost != nil {
		return 0, lost
	}
	// Connection trouble or a slow answer: try again soon, and no later
	// than the give-up time, so that the hold ends on time if the
	// connection does not come back.
	return max(min(every/renewalsPerLease, giveUpAt.Sub(r.m.clock.Now())), time.Millisecond), nil
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

// drop deletes our node after the hold was lost, by name and at any
// version as the queue's Release does, and, when the ensemble cannot be
// reached, in the background until the node or the session is gone.
func (r *renewal) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), r.m.lease)
	defer cancel()
	countWrite(r.m, dropWrite)
	_ = r.m.q.Release(ctx, r.node) // the loss it reports is ours already
}
