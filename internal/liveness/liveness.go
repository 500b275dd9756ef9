// Package liveness keeps, for one ZooKeeper session, the latest moment at
// which the client can prove that the leader refreshed the session: the
// one clock that every hold on the session ends by (internal/hold).
//
// # What the leader does
//
// The leader alone expires sessions, a session timeout T after it last
// refreshed one (ExpiryQueue rounds the deadline up to the next tick, so
// never sooner). It refreshes a session in three ways (ZooKeeper 3.8):
//
//   - A request of a client attached to the leader itself
//     (ZooKeeperServer.submitRequestNow touches the session).
//   - A ping reply of a follower: every half tick the leader pings each
//     follower (Leader.lead), and the follower answers with the sessions
//     its clients touched since its last answer, pings and reads included
//     (Learner.ping, LearnerSessionTracker.snapshot); the leader touches
//     each (LearnerHandler, case PING).
//   - A reconnection on the same session: the server revalidates it with
//     the leader, which touches it (Leader.revalidateSession), before the
//     client gets the session back.
//
// A request that a follower forwards (a write, a sync) does not refresh
// the session: the leader hands it to PrepRequestProcessor, whose
// checkSession only checks (LeaderZooKeeperServer.submitLearnerRequest).
// So an answered write or sync proves that the session was alive when
// the leader handled it, not that it will live a session timeout more:
// the follower may be cut off from the leader right after relaying the
// answer, before its next ping reply, and the leader then dates the
// session from the reply before.
//
// # The rule
//
// A client does not know whether its server leads. The clock therefore
// credits a request (any request: a read or a write, sent at s1 and
// answered at a1) only once a later request through the leader (a write
// or a sync, sent at s2 >= a1 + G) is answered on the same session:
//
//   - The server touched the session when request 1 arrived, between s1
//     and a1.
//   - If the server leads, that touch is the refresh: done.
//   - If it follows, it answered every leader ping it got after the touch
//     with a reply listing the session, on the one stream on which it
//     also forwards requests, and the leader reads that stream in order
//     and applies a ping reply at once. Request 2 left the follower after
//     s2, so after a window of G since the touch. A following server hears
//     a ping every half tick, and the servers grant sessions of at least
//     two ticks (minSessionTimeout's default), so G = T/4 covers a half
//     tick: a ping reply listing the session went ahead of request 2, and
//     the leader refreshed the session, after s1, before it answered 2.
//   - If the server lost its leader in between, it dropped its clients
//     (Learner.shutdown closes every connection); request 2 answered on
//     the same session means the client reconnected, and the leader
//     revalidated (touched) the session then, after s1.
//
// In each case the leader refreshed the session after s1, so it cannot
// expire it before s1 + T. A reconnection on the same session is credited
// directly, from the last moment the old connection was seen up.
//
// Bounds and assumptions: the rule needs T >= 2 ticks, T being the
// session's timeout (the one the servers granted, which zklocks.Connect
// learns, or the one told to zklocks.NewSession; an operator who sets
// minSessionTimeout below two ticks voids it), and a follower that
// answers a leader ping within T/4
// of the touch (a leader whose ping loop stalls for more than T/4 while
// it goes on answering requests voids it; at T = 2 ticks, T/4 is the ping
// interval itself, with no margin). It assumes clients attached to
// participants or to observers that talk to the leader: an observer
// behind a follower's ObserverMaster reports its sessions to that
// follower, which reports them at its own next ping reply, two hops of
// up to half a tick each. With the keeper's syncs the clock trails the
// present by G plus three round trips to 3G/2 plus four (T/4 to 3T/8 on a
// fast link): a hold that ends nine tenths of T after the proven moment
// rides out a disconnection of 0.52 to 0.65 of a session timeout, less
// four round trips.
//
// # The keeper
//
// The Session of a connection starts its keeper (New): one goroutine that looks at the connection's state every
// fortieth of a session timeout (10ms to 250ms), sends a sync T/8 after
// the last request through the leader went out or was answered, credits
// reconnections, and ends when the connection is closed. It also times
// the session's epochs (epoch.go): an epoch ends at LossAt, at an expiry
// or at the close, and every hold on the connection waits on the current
// epoch's one channel. Every lock on the connection shares the clock,
// the keeper and the epoch, so a thousand held locks cost the servers and
// the client what one does.
//
// Until the keeper's first two syncs have been answered, a T/4 apart,
// the clock has nothing proven: the first hold on a new connection waits
// for them (Clock.AwaitFresh). Unless the clock knows when the connection
// was made (New's born, which zklocks.Connect gives): every session of a
// connection was created after that moment, and the leader refreshes a
// session when it creates it (the createSession request, forwarded by a
// follower, is handled by the leader's PrepRequestProcessor, which tracks
// the session from then), so the birth is a proven moment for it.
package liveness

import (
	"context"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Clock is the proven clock of one connection's session. Its zero value
// is not usable; use For.
type Clock struct {
	conn      *zk.Conn
	kick      chan struct{} // wakes the keeper: a hold waits for the clock
	stopped   chan struct{} // closed when the keeper ends
	closing   chan struct{} // closed by Close
	closeOnce sync.Once

	mu      sync.Mutex
	timeout time.Duration
	born    time.Time     // when the connection was made, zero if unknown
	sid     int64         // the session the clock is about
	l       ledger        // sid's requests and what they prove
	moved   chan struct{} // closed and replaced when the proven moment moves on
	waiters int           // holds waiting in AwaitFresh
	ep      *Epoch        // the current or the last epoch (epoch.go)
	closed  bool          // the keeper saw the connection closed
}

// New returns the clock of conn's session, whose timeout is the one the
// servers granted, and starts its keeper (ended when conn is closed). born
// is when conn was made (zk.Connect called), a proven moment for every
// session the connection will have; zero when unknown. The Session that
// owns conn makes it, once, and hands it to every lock made on it.
func New(conn *zk.Conn, timeout time.Duration, born time.Time) *Clock {
	c := &Clock{conn: conn, timeout: timeout, born: born, sid: conn.SessionID(),
		kick: make(chan struct{}, 1), stopped: make(chan struct{}), closing: make(chan struct{}), moved: make(chan struct{})}
	c.l.credit(born)
	go c.keep()
	return c
}

// SessionClock returns the clock of a *zklocks.Session. The root package
// sets it: the Session's clock is not part of the public API, and the
// locks below it reach it only through here.
var SessionClock func(session any) *Clock

// ConnClosed is closed once the keeper has found the connection closed
// (Close, or StateDisconnected at every look for two polls and then the
// connection's own answer, zkconn.Closed): the one place in the module
// that tells a closed connection from one between servers.
func (c *Clock) ConnClosed() <-chan struct{} { return c.stopped }

// Timeout returns the session timeout the clock assumes.
func (c *Clock) Timeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// Answered records a request of session sid, sent at sent and answered by
// the servers (an error the servers returned counts; a lost connection
// does not) at answered; viaLeader marks a write or a sync.
func (c *Clock) Answered(sid int64, sent, answered time.Time, viaLeader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onSession(sid) {
		c.moveOn(c.l.answered(sent, answered, viaLeader, gap(c.timeout)))
	}
}

// Sent records that a request through the leader went out on session
// sid at sent, answered or not: the keeper need not send one of its own
// for a while.
func (c *Clock) Sent(sid int64, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onSession(sid) {
		c.l.sent(sent)
	}
}

// Revalidated credits a reconnection on session sid: the leader touched
// the session after at, the last moment the old connection was seen up.
func (c *Clock) Revalidated(sid int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.onSession(sid) {
		c.moveOn(c.l.credit(at))
	}
}

// onSession reports whether sid is the clock's session, moving the clock
// to sid first if the connection has it now (the old session expired:
// nothing of it carries over). Called with mu held.
func (c *Clock) onSession(sid int64) bool {
	if sid == 0 {
		return false
	}
	if sid != c.sid {
		if sid != c.conn.SessionID() {
			return false
		}
		c.sid, c.l = sid, ledger{}
		c.l.credit(c.born) // the new session too was made after the connection
	}
	return true
}

// moveOn wakes AwaitFresh when the proven moment moved. Called with mu
// held.
func (c *Clock) moveOn(moved bool) {
	if moved {
		close(c.moved)
		c.moved = make(chan struct{})
	}
}

// Proven returns the latest moment at which the leader provably refreshed
// the connection's current session, or the zero time. The time carries
// its monotonic reading.
func (c *Clock) Proven() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid == 0 || c.sid != c.conn.SessionID() {
		return time.Time{}
	}
	return c.l.proven
}

// LossAt is when a hold on the session must be given up: a session
// timeout after the proven moment, less a tenth kept for timers and
// scheduling.
func (c *Clock) LossAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lossAtLocked()
}

// Fresh reports whether the clock promises at least a quarter of a
// session timeout before LossAt.
func (c *Clock) Fresh() bool {
	return time.Until(c.LossAt()) >= c.Timeout()/4
}

// AwaitFresh waits until the clock is Fresh, asking the keeper for the
// syncs that prove it, and returns nil then, or ctx's error. On a
// connection whose clock has nothing proven that takes two syncs a
// quarter of a session timeout apart.
func (c *Clock) AwaitFresh(ctx context.Context) error {
	c.mu.Lock()
	c.waiters++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.waiters--
		c.mu.Unlock()
	}()
	for {
		c.mu.Lock()
		moved := c.moved // before Fresh: a move in between is not missed
		c.mu.Unlock()
		if c.Fresh() {
			return nil
		}
		select {
		case c.kick <- struct{}{}:
		default:
		}
		select {
		case <-moved:
		case <-c.stopped:
			return zk.ErrConnectionClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// due returns when the keeper should send its next sync: the sync
// interval after the last request through the leader, or, while a hold
// waits for the clock, as soon as a sync would prove something.
func (c *Clock) due(now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := c.l.leader.Add(syncEvery(c.timeout))
	if c.waiters == 0 {
		return next
	}
	newest, ok := c.l.newest()
	if !ok {
		return now // nothing to prove yet: a sync to prove later
	}
	if proves := newest.answered.Add(gap(c.timeout)); proves.Before(next) {
		return proves
	}
	return next
}
