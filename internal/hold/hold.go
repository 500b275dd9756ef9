// Package hold watches one lock node for as long as its owner cares and
// tells the owner, through a channel, when the node can no longer be
// trusted to be there: it was deleted, its session expired, or the client
// can no longer show that the leader has heard from its session recently
// enough for the session to be alive.
//
// The last case is the one a client cannot observe directly. The leader
// expires a session a session timeout after it last refreshed it, and a
// follower's clients are refreshed only by the follower's ping replies,
// never by a request it forwards: a client whose follower is cut off from
// the leader goes on getting answers to its pings and reads until the
// follower notices, syncLimit ticks later, while the leader may expire
// the session meanwhile. So a hold ends by the connection's proven clock
// of the leader (internal/liveness: a request counts only once a later
// request through the leader, sent a quarter of a session timeout after
// its answer, is answered too; a keeper per connection sends the syncs
// that keep it fresh, and ends the session's epoch when the clock runs
// out). The hold is given up nine tenths of a session timeout after the
// proven moment (Clock.LossAt, the end of the epoch it began in),
// connected or not:
// earlier than Curator, whose SUSPENDED-to-LOST timer starts a session
// timeout after the client noticed a disconnection, by when another
// client can already hold the lock. The margin of a tenth is for timers
// and scheduling; the lag of the follower's reports is in the rule.
//
// A monitor is one goroutine that waits on its node's watch and, once
// its contender holds, on the epoch's channel: an idle hold wakes for
// nothing. The arithmetic uses the session's timeout, which must be the
// one the servers granted (zklocks.Connect learns it; NewSession must be
// told it).
package hold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Reasons a hold ends, as returned by Err.
var (
	ErrReleased       = errors.New("released")
	ErrNodeDeleted    = errors.New("node deleted")
	ErrSessionExpired = liveness.ErrExpired
)

// Monitor watches one node. Done closes when the hold ends for any reason;
// Err then says which.
type Monitor struct {
	c       *zkop.Client
	path    string
	session int64
	czxid   int64 // our node's creation: a node made again at path is not ours
	done    chan struct{}
	stop    chan struct{}
	once    sync.Once
	err     error
	exited  chan struct{}
	// requests is cancelled when the hold ends, so that Release never
	// waits for an answer on a link that has gone silent.
	requests context.Context
	cancel   context.CancelFunc

	mu     sync.Mutex // guards ended, onLoss and joined
	ended  bool
	onLoss func(reason error)
	joined *liveness.Epoch // the epoch the hold counts itself on (join)

	revoked *revocation // closed when a client asks the holder to let go

	// acquired hands the run loop the epoch the hold began in. A clock
	// that runs out ends only a hold: a queued contender shows the leader
	// its session when it acquires (Acquired), and one whose session
	// expired learns it from its watch.
	acquired chan *liveness.Epoch
}

// Watch reads path once with a data watch and starts watching it. The
// data and stat returned are the node's, from that first read. It fails
// with ErrNodeDeleted when the node is already gone, and with
// ErrSessionExpired when the node belongs to another session than conn's
// current one: a node left by an expired session must never be taken for
// ours.
func Watch(ctx context.Context, c *zkop.Client, path string) (*Monitor, []byte, *zk.Stat, error) {
	m, data, stat, err := watch(ctx, c, path)
	if err == nil {
		m.Acquired(ctx)
	}
	return m, data, stat, err
}

// WatchQueued is Watch for a contender that does not hold the lock yet:
// being cut off does not end it until Acquired is called.
func WatchQueued(ctx context.Context, c *zkop.Client, path string) (*Monitor, []byte, *zk.Stat, error) {
	return watch(ctx, c, path)
}

func watch(ctx context.Context, c *zkop.Client, path string) (*Monitor, []byte, *zk.Stat, error) {
	session := c.Conn.SessionID()
	data, stat, ev, err := c.GetW(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil, ErrNodeDeleted
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if stat.EphemeralOwner != session {
		return nil, nil, nil, fmt.Errorf("%w: %s belongs to session %#x, ours is %#x", ErrSessionExpired, path, stat.EphemeralOwner, session)
	}
	m := &Monitor{c: c, path: path, session: session, czxid: stat.Czxid,
		done: make(chan struct{}), stop: make(chan struct{}), exited: make(chan struct{}),
		acquired: make(chan *liveness.Epoch, 1), revoked: newRevocation()}
	m.revoked.seen(data)
	m.requests, m.cancel = context.WithCancel(context.Background())
	go m.run(ev)
	return m, data, stat, nil
}

// Acquired tells a monitor started by WatchQueued that its contender now
// holds the lock. A hold must start with time in hand: when the clock
// promises less than a quarter of a session timeout (the connection is
// new, or it could not reach the leader for a while: an election, say),
// Acquired first waits for the keeper to prove a fresher moment, bounded
// by ctx and half a session timeout; if the clock is out after that, the
// hold ends at once.
func (m *Monitor) Acquired(ctx context.Context) {
	if !m.c.Clock.Fresh() {
		wctx, cancel := context.WithTimeout(ctx, m.c.SessionTimeout()/2)
		_ = m.c.Clock.AwaitFresh(wctx) // a failure leaves the clock where it is
		cancel()
	}
	ep := m.c.Clock.Epoch()
	switch {
	case ep.Reason() != nil:
		m.end(ep.Reason())
	case ep.Session() != m.session:
		m.end(ErrSessionExpired)
	default:
		if err := m.join(ep); err != nil {
			m.end(err)
			return
		}
		select {
		case m.acquired <- ep:
		default: // called twice: the first epoch stands
		}
	}
}

// join counts the hold on its epoch (Epoch.Join) until the hold ends, so
// that Session.Close returns only once this Done has closed. It returns
// why the epoch ended when it has; nil also when the hold has ended or
// has joined before.
func (m *Monitor) join(ep *liveness.Epoch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || m.joined != nil {
		return nil
	}
	if err := ep.Join(); err != nil {
		return err
	}
	m.joined = ep
	return nil
}

// Done is closed when the hold ends.
func (m *Monitor) Done() <-chan struct{} { return m.done }

// Session is the session that made the node (its ephemeral owner).
func (m *Monitor) Session() int64 { return m.session }

// Path is the watched node's full path.
func (m *Monitor) Path() string { return m.path }

// Err returns why the hold ended, or nil while it lasts.
func (m *Monitor) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// Context returns a context that ends when the hold does: for requests
// about the hold that must not outlive it (a lease's renewal, say).
func (m *Monitor) Context() context.Context { return m.requests }

// Release ends the hold without calling it lost and waits for the watching
// goroutine to exit.
func (m *Monitor) Release() {
	m.end(ErrReleased)
	<-m.exited
}

// Lose ends the hold as lost for the given reason, for owners that learn of
// a loss on their own (a failed renewal, say).
func (m *Monitor) Lose(reason error) { m.end(reason) }

// OnLoss has f called once with the reason when the hold ends for any
// reason but Release: at once (in the caller) if it already has, else in
// whichever goroutine ends it, right after Done closes: a slow f (a
// logger, say) never delays Done. f must not call the Monitor. The locks
// use it to log a loss when it happens, not when their owner next looks.
func (m *Monitor) OnLoss(f func(reason error)) {
	m.mu.Lock()
	if !m.ended {
		m.onLoss = f
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	if m.err != ErrReleased { // set before ended
		f(m.err)
	}
}

func (m *Monitor) end(reason error) {
	m.once.Do(func() {
		m.err = reason
		m.mu.Lock()
		m.ended = true
		f, joined := m.onLoss, m.joined
		m.mu.Unlock()
		close(m.done)
		close(m.stop)
		m.cancel()
		if joined != nil {
			joined.Leave()
		}
		if f != nil && reason != ErrReleased {
			f(reason)
		}
	})
}

// retryEvery is how long a monitor waits before it sets its watch again
// after a read that failed (the connection was down, say).
func (m *Monitor) retryEvery() time.Duration {
	return max(min(m.c.SessionTimeout()/8, 250*time.Millisecond), 10*time.Millisecond)
}

// run waits for whichever ends the hold first: its node's watch, or, once
// the contender holds, the end of the session's epoch (liveness.Epoch),
// which the connection's keeper times for every hold at once. An idle
// hold therefore wakes for nothing: no ticker, no timer of its own.
//
// The read that sets the watch again after a data change runs beside the
// loop, never in it: a read queued in go-zookeeper while the connection
// is down can wait a session timeout, and the loop must meanwhile take
// the acquisition's epoch and see it end.
func (m *Monitor) run(ev <-chan zk.Event) {
	defer close(m.exited)
	var over <-chan struct{} // the epoch's, once held
	var ep *liveness.Epoch
	var retry <-chan time.Time        // set only after a failed read
	var reread <-chan <-chan zk.Event // the re-arming read under way
	for {
		select {
		case <-m.stop:
			return
		case ep = <-m.acquired:
			over = ep.Over()
		case <-over:
			m.end(ep.Reason())
			return
		case e := <-ev:
			ev = nil
			if reason := m.onEvent(e); reason != nil {
				m.end(reason)
				return
			}
			reread = m.rearm() // a data change (our own renewal, say)
		case <-retry:
			retry, reread = nil, m.rearm()
		case ev = <-reread:
			reread = nil
			if ev == nil {
				retry = time.After(m.retryEvery())
			}
		}
	}
}

// onEvent classifies one watch event; nil means "still held, re-arm".
func (m *Monitor) onEvent(e zk.Event) error {
	m.c.Notified()
	switch {
	case e.Type == zk.EventNodeDeleted:
		return ErrNodeDeleted
	case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrSessionExpired):
		return ErrSessionExpired
	case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrClosing):
		return liveness.ErrClosed
	case e.Type == zk.EventNotWatching:
		return fmt.Errorf("%w: %v", liveness.ErrCutOff, e.Err)
	}
	return nil
}

// rearm sets a fresh data watch after a data change fired the last one,
// in a goroutine of its own, and hands the loop the new watch, or nil
// when the read failed without ending the hold: either the connection is
// down or the node is gone, and the loop tries again a little later (the
// next read reports a deletion). The read is bounded by a session
// timeout and ends with the hold (Release cancels it).
//
// The node at our path is ours only if it is the very node we watched:
// another Mutex on the same connection can make it again, with our
// session as its owner, while we were disconnected, and the server then
// reports it to our watch as a data change. The creation zxid tells.
func (m *Monitor) rearm() <-chan <-chan zk.Event {
	out := make(chan (<-chan zk.Event), 1)
	go func() { out <- m.read() }()
	return out
}

func (m *Monitor) read() <-chan zk.Event {
	if sid := m.c.Conn.SessionID(); sid != 0 && sid != m.session {
		m.end(ErrSessionExpired)
		return nil
	}
	ctx, cancel := context.WithTimeout(m.requests, m.c.SessionTimeout())
	defer cancel()
	data, stat, ev, err := m.c.GetW(ctx, m.path)
	switch {
	case errors.Is(err, zk.ErrNoNode) && m.c.Conn.SessionID() != m.session:
		m.end(ErrSessionExpired) // the read went out on the next session
	case errors.Is(err, zk.ErrNoNode):
		m.end(ErrNodeDeleted)
	case err == nil && stat.Czxid != m.czxid:
		m.end(fmt.Errorf("%w: %s was made again by session %#x", ErrNodeDeleted, m.path, stat.EphemeralOwner))
	case err == nil && stat.EphemeralOwner != m.session:
		m.end(ErrSessionExpired)
	case err == nil:
		m.revoked.seen(data)
		return ev
	}
	return nil
}
