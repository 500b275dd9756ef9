package zklocks

import (
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/lockerr"
)

// Session is a ZooKeeper connection as the locks see it: the connection,
// the session timeout the servers granted it, and the one clock of its
// session that every lock made on it shares. ZooKeeper keeps liveness per
// session, and so does Session: one keeper per connection proves that the
// leader keeps the session alive (a sync every eighth of a session
// timeout, whatever the number of locks held on it), and each lock's
// hold ends when its own node goes or when the session's epoch ends (see
// Done), with nothing per lock to poll.
//
// Give it a session timeout of at least 3 of the servers' ticks (the
// default bounds grant 2 to 20): a leader cut off from its quorum answers
// its own clients' syncs (its CommitProcessor runs with matchSyncs off)
// until the full-tick quorum check of Leader.lead shuts it down, up to a
// tick after its followers gave up on it (Follower's read timeout of
// syncLimit ticks), while its successor's SessionTrackerImpl gives every
// session a full timeout from its own start. Only from 3 ticks on does
// the cut-off rule's margin cover that tick (ZooKeeper 3.8;
// docs/reliability.md, "Found by review, round 4").
//
// Make one with Connect, which opens the connection and learns the
// granted timeout, or with NewSession around a connection you already
// have. Any number of locks, of any variant, can share one Session; its
// methods are safe for concurrent use.
//
// A Session follows its connection: go-zookeeper opens a new ZooKeeper
// session by itself after an expiry, and the locks made on the Session go
// on working on it (a hold of the old session is lost, a new Lock queues
// in the new one). Done and Err are about the session the connection has
// now. This differs from etcd's concurrency.Session, which is one lease
// and is over for good once that lease is.
type Session struct {
	conn   *zk.Conn
	clock  *liveness.Clock // the session's one clock, and its timeout
	events <-chan zk.Event // Connect's: closed once the connection's goroutines end
}

// The locks reach a Session's clock through liveness.SessionClock.
func init() {
	liveness.SessionClock = func(s any) *liveness.Clock { return s.(*Session).clock }
}

// SessionOption configures NewSession.
type SessionOption func(*sessionOptions)

type sessionOptions struct {
	timeout time.Duration
}

// WithSessionTimeout tells NewSession the session timeout the servers
// granted the connection: go-zookeeper does not say it, and the locks'
// arithmetic (when a cut-off hold must be given up, how long a clean-up
// goes on) rests on it. Servers clamp the timeout a client asks for to
// [2, 20] ticks by default; pass what they granted (Connect learns it by
// itself). A duration that is not positive makes NewSession fail with
// ErrBadOption.
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(o *sessionOptions) { o.timeout = d }
}

// NewSession wraps conn, a connection made with zk.Connect, for the locks.
// WithSessionTimeout is required: without it, NewSession fails with
// ErrBadOption. It starts the session's keeper (one goroutine, ended when
// conn is closed) and sends nothing else. Make one Session per
// connection and share it: each Session has a clock and a keeper of its
// own, which a second one on the same connection would duplicate.
func NewSession(conn *zk.Conn, opts ...SessionOption) (*Session, error) {
	if conn == nil {
		return nil, lockerr.Wrap("zklocks", "new session", "", ErrNilConn)
	}
	var o sessionOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.timeout <= 0 {
		return nil, lockerr.Wrap("zklocks", "new session", "", fmt.Errorf(
			"%w: session timeout %v (pass WithSessionTimeout with the positive one the servers granted)", ErrBadOption, o.timeout))
	}
	return newSession(conn, o.timeout, time.Time{}), nil
}

// newSession makes the Session of conn and its clock; born is when conn
// was made, zero when unknown.
func newSession(conn *zk.Conn, timeout time.Duration, born time.Time) *Session {
	return &Session{conn: conn, clock: liveness.New(conn, timeout, born)}
}

// Conn returns the session's connection.
func (s *Session) Conn() *zk.Conn { return s.conn }

// Timeout returns the session timeout: the one the servers granted, for
// a Session made by Connect.
func (s *Session) Timeout() time.Duration { return s.clock.Timeout() }

// ID returns the id of the ZooKeeper session the connection has now, 0
// while it has none.
func (s *Session) ID() int64 { return s.conn.SessionID() }

// Done returns a channel that is closed when the session's current epoch
// ends: the session expired, the connection was closed, or the client
// has been cut off from the leader so long that the leader may soon
// expire the session (nine tenths of a session timeout after the latest
// moment the client can prove that the leader refreshed it). Every hold
// on the Session is lost then. While the session is not proven alive
// (before the first proof, or between an expiry and the next session)
// Done returns a closed channel; once it is proven alive again, Done
// returns a new channel. Like a lock's Done, it comes late to a paused
// process: fence the resource with the lock's token.
func (s *Session) Done() <-chan struct{} { return s.clock.Epoch().Over() }

// Err returns why the session's last epoch ended, wrapping ErrSessionLost
// and the reason (zk.ErrSessionExpired, zk.ErrClosing, or the cut-off),
// or nil while the session is proven alive.
func (s *Session) Err() error {
	if reason := s.clock.Epoch().Reason(); reason != nil {
		return fmt.Errorf("%w: %w", ErrSessionLost, reason)
	}
	return nil
}

// Close closes the connection, which ends the ZooKeeper session: the
// servers delete its ephemeral nodes (every lock node of it) at once,
// and every hold on the Session is lost. It closes the connection of a
// Session made by NewSession too: a Session stands for its connection's
// session. For a Session made by Connect, Close returns once the
// connection's goroutines have ended (go-zookeeper gives its close
// request a second), or after a session timeout and two seconds more
// if they have not: called from the connection's event callback, for
// one, they can not end before it returns.
func (s *Session) Close() {
	s.clock.Close() // every hold's Done first: the servers delete the nodes next
	s.conn.Close()
	if s.events == nil {
		return
	}
	bound := time.NewTimer(s.Timeout() + closeWait)
	defer bound.Stop()
	for {
		select {
		case _, open := <-s.events: // closed when go-zookeeper's loop has ended
			if !open {
				return
			}
		case <-bound.C:
			return // the loop is stuck: in a dial, or in the event callback that called Close
		}
	}
}

// closeWait is how much longer than a session timeout Close waits for
// the connection's goroutines.
const closeWait = 2 * time.Second
