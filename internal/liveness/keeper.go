package liveness

import (
	"time"

	"github.com/go-zookeeper/zk"
)

// poll is how often the keeper looks at the connection's state.
const poll = 50 * time.Millisecond

// keep is the keeper of the package doc. It ends once the connection has
// been closed: go-zookeeper leaves a closed connection StateDisconnected
// for good, while a lost one passes through that state only on its way
// to reconnecting, so two sightings a poll apart mean closed (the rule of
// internal/zkop's Later).
func (c *Clock) keep() {
	defer close(c.stopped)
	timer := time.NewTimer(0)
	defer timer.Stop()
	var inflight chan struct{} // closed when the keeper's sync is over; nil when none
	lastUp, down, disconnected := time.Now(), false, 0
	for {
		select {
		case <-timer.C:
		case <-c.kick:
		case <-inflight:
			inflight = nil
		}
		now := time.Now()
		state, sid := c.conn.State(), c.conn.SessionID()
		switch {
		case state == zk.StateDisconnected:
			if disconnected++; disconnected == 2 {
				return
			}
			down = true
		case state != zk.StateHasSession:
			disconnected, down = 0, true
		default:
			disconnected = 0
			if down {
				// Back on the same session (or on a new one, which
				// Revalidated ignores once Answered has moved the clock).
				c.Revalidated(sid, lastUp)
				down = false
			}
			lastUp = now
			if inflight == nil && !now.Before(c.due(now)) {
				inflight = c.sync(sid)
			}
		}
		timer.Reset(min(poll, max(time.Until(c.due(time.Now())), time.Millisecond)))
	}
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
		}
	}()
	return done
}
