package liveness

import (
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkconn"
)

// pollOf is how often the keeper looks at the connection's state: a
// fortieth of a session timeout, between 10ms and 250ms. The looks date
// a reconnection's credit (the last look that saw the session up), so a
// coarser poll credits up to a poll less; it never delays a loss, whose
// moment the keeper's timer aims at directly. An idle session costs the
// client its looks, so they are few: four a second at 10s.
func pollOf(timeout time.Duration) time.Duration {
	return min(max(timeout/40, 10*time.Millisecond), 250*time.Millisecond)
}

// minPoll is how often the keeper looks while the connection has no
// session (a connection closed without Clock.Close is seen after two
// such looks), and paces its retries of a failed sync.
const minPoll = 50 * time.Millisecond

// keep is the keeper of the package doc. It ends once the connection has
// been closed: StateDisconnected on every look for closedAfter, and then
// the connection's own answer (zkconn.Closed). The keeper wakes more
// often than every poll (a sync's end, a hold's kick): a count of
// sightings alone could be fooled by two looks a microsecond apart.
func (c *Clock) keep() {
	defer close(c.stopped)
	defer c.markClosed()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var inflight chan struct{} // closed when the keeper's sync is over; nil when none
	// lastUp is the last look that saw the session up, zero before the
	// first: a connection first seen connecting may already be in its
	// handshake, and crediting the keeper's start would credit a moment
	// later than the leader's touch.
	var lastUp time.Time
	down := false
	var disconnectedSince time.Time // zero unless every look since saw StateDisconnected
	for {
		select {
		case <-timer.C:
		case <-c.kick:
		case <-inflight:
			inflight = nil
		case <-c.closing:
			return
		}
		now := time.Now()
		state, sid := c.conn.State(), c.conn.SessionID()
		poll := pollOf(c.Timeout())
		if state != zk.StateHasSession {
			poll = min(poll, minPoll) // a closed connection is seen soon
		}
		closedAfter := 2 * poll // StateDisconnected at every look this long: maybe closed
		switch {
		case state == zk.StateDisconnected:
			if disconnectedSince.IsZero() {
				disconnectedSince = now
			} else if now.Sub(disconnectedSince) >= closedAfter && zkconn.Closed(c.conn) {
				return
			}
			down = true
		case state != zk.StateHasSession:
			disconnectedSince, down = time.Time{}, true
		default:
			disconnectedSince = time.Time{}
			if down && !lastUp.IsZero() {
				// Back with a session: the leader revalidated ours, or
				// made a new one, after the old connection failed, so
				// after lastUp. Either is a refresh of the session we
				// have now.
				c.Revalidated(sid, lastUp)
			}
			down = false
			lastUp = now
			if inflight == nil && !now.Before(c.due(now)) {
				inflight = c.sync(sid)
			}
		}
		c.step(time.Now())
		timer.Reset(c.nextLook(poll, inflight == nil && state == zk.StateHasSession))
	}
}

// nextLook is how long the keeper sleeps: until its next sync is due (if
// it can send one: a sync in flight or no session leaves the due moment
// in the past, and the keeper would spin), or until the live epoch runs
// out, and never longer than a poll.
func (c *Clock) nextLook(poll time.Duration, canSync bool) time.Duration {
	now := time.Now()
	wait := poll
	if canSync {
		wait = min(wait, c.due(now).Sub(now))
	}
	if loss, live := c.liveLossAt(); live {
		wait = min(wait, loss.Sub(now))
	}
	return max(wait, time.Millisecond)
}

// markClosed ends the epoch for good: the connection is closed.
func (c *Clock) markClosed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.stepLocked(time.Now())
}

// sync sends one sync on session sid and records its answer; the channel
// closes when it is over. go-zookeeper fails it when the connection goes,
// so it never outlives the connection by long.
func (c *Clock) sync(sid int64) chan struct{} {
	done := make(chan struct{})
	sent := time.Now()
	c.Sent(sid, sent)
	go func() {
		defer close(done)
		if _, err := c.conn.Sync("/"); err == nil {
			c.Answered(sid, sent, time.Now(), true)
		} else {
			time.Sleep(minPoll) // a failed sync is not sent again at once
		}
	}()
	return done
}

// Close ends the epoch for good and the keeper with it: the connection
// is being closed. zklocks.Session.Close calls it before it closes the
// connection, so that every hold's Done has closed before the servers
// delete the session's nodes.
//
// It returns once the Done of every hold of the ended epoch has closed
// (Epoch.Join), or after holdsWait: the servers hand the locks over as
// soon as the connection closes, and no hold may still look held then.
func (c *Clock) Close() {
	c.mu.Lock()
	last := c.ep
	c.closed = true
	c.stepLocked(time.Now())
	c.mu.Unlock()
	c.closeOnce.Do(func() { close(c.closing) })
	if last != nil {
		last.awaitHolds(holdsWait)
	}
}

// holdsWait bounds Close's wait for the holds' Done channels: each closes
// in its monitor's goroutine, which a loaded machine may run late.
const holdsWait = 5 * time.Second
