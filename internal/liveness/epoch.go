package liveness

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Why an epoch ended, as returned by Epoch.Reason.
var (
	ErrCutOff  = errors.New("cut off from the ensemble long enough for the session to expire")
	ErrExpired = fmt.Errorf("session expired: %w", zk.ErrSessionExpired)
	ErrClosed  = fmt.Errorf("connection closed: %w", zk.ErrClosing)
)

// Epoch is one stretch of a session during which the clock promises that
// the leader has not expired it: it begins when the session is proven
// alive and ends, for good, at the first of the clock running out
// (LossAt), the session changing (an expiry) or the connection closing.
// A session that is proven alive again after its clock ran out starts a
// new epoch: whatever relied on the old one must not assume it lasted.
//
// One epoch is shared by every hold on the connection, so the clock's
// keeper alone times the loss, and a thousand holds wait on one channel
// instead of a thousand timers.
type Epoch struct {
	sid    int64
	over   chan struct{}
	reason error // set before over closes

	mu      sync.Mutex
	ended   bool
	holds   int           // holds that joined and whose Done is still open
	drained chan struct{} // closed when holds is 0 after the end; nil until asked
}

// Join counts a hold on the epoch until its Leave, so that Clock.Close
// can wait for every hold's Done. When the epoch is over already it
// counts nothing and returns why it ended.
func (e *Epoch) Join() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return e.reason
	}
	e.holds++
	return nil
}

// Leave ends a Join: the hold's Done has closed.
func (e *Epoch) Leave() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.holds--
	if e.holds == 0 && e.drained != nil {
		close(e.drained)
		e.drained = nil
	}
}

// awaitHolds waits, after the end, until every hold that joined has left,
// or until within passes.
func (e *Epoch) awaitHolds(within time.Duration) {
	e.mu.Lock()
	if e.holds == 0 {
		e.mu.Unlock()
		return
	}
	if e.drained == nil {
		e.drained = make(chan struct{})
	}
	drained := e.drained
	e.mu.Unlock()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	}
}

// Over is closed when the epoch ends.
func (e *Epoch) Over() <-chan struct{} { return e.over }

// Reason says why the epoch ended, or nil while it lasts.
func (e *Epoch) Reason() error {
	select {
	case <-e.over:
		return e.reason
	default:
		return nil
	}
}

// Session is the session id the epoch is about; 0 for the epoch returned
// while there is no session.
func (e *Epoch) Session() int64 { return e.sid }

func (e *Epoch) end(reason error) {
	e.mu.Lock()
	e.ended, e.reason = true, reason
	e.mu.Unlock()
	close(e.over)
}

// noEpoch is what Epoch returns while nothing is proven alive.
func noEpoch(reason error) *Epoch {
	e := &Epoch{over: make(chan struct{})}
	e.end(reason)
	return e
}

// Epoch returns the current epoch, ended (with why) when the session is
// not proven alive now.
func (c *Clock) Epoch() *Epoch {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stepLocked(time.Now())
	return c.ep
}

// step ends the current epoch when its time is up and begins the next one
// when the session is proven alive again. The keeper calls it at every
// look and at LossAt; Epoch calls it too, so that no caller depends on the
// keeper's timing.
func (c *Clock) step(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stepLocked(now)
}

func (c *Clock) stepLocked(now time.Time) {
	sid := c.conn.SessionID()
	if c.ep != nil && c.ep.Reason() == nil {
		switch {
		case c.closed:
			c.ep.end(ErrClosed)
		case sid != c.ep.sid:
			c.ep.end(ErrExpired)
		case !now.Before(c.lossAtLocked()):
			c.ep.end(ErrCutOff)
		default:
			return
		}
	}
	switch {
	case c.closed:
		c.ep = noEpoch(ErrClosed)
	case sid != 0 && sid == c.sid && now.Before(c.lossAtLocked()):
		c.ep = &Epoch{sid: sid, over: make(chan struct{})}
		c.wakeKeeper() // its timer must aim at the new epoch's end
	case c.ep == nil:
		c.ep = noEpoch(ErrCutOff)
	}
}

// liveLossAt returns when the current epoch ends by the clock, and
// whether it is live.
func (c *Clock) liveLossAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ep == nil || c.ep.Reason() != nil {
		return time.Time{}, false
	}
	return c.lossAtLocked(), true
}

// wakeKeeper has the keeper look again soon, without waiting for it.
func (c *Clock) wakeKeeper() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// lossAtLocked is LossAt with mu held.
func (c *Clock) lossAtLocked() time.Time {
	if c.sid == 0 || c.sid != c.conn.SessionID() || c.l.proven.IsZero() {
		return time.Time{}
	}
	return c.l.proven.Add(c.timeout - c.timeout/10)
}
