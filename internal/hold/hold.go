// Package hold watches one lock node for as long as its owner cares and
// tells the owner, through a channel, when the node can no longer be
// trusted to be there: it was deleted, its session expired, or the client
// has been cut off from the ensemble so long that the servers may soon
// expire its session.
//
// The last case is the one a client cannot observe directly. While it is
// disconnected it does not know whether the servers have already expired
// its session, and it learns of the disconnection late: go-zookeeper
// notices a silent link only when nothing has arrived for two thirds of
// the session timeout (its read timeout; it pings every third). The
// servers may expire the session one session timeout after they last
// heard from the client, so the client has at most one third of the
// session timeout left once it notices. The monitor gives up the hold
// before that third is over (see lossAt), not a whole session timeout
// after noticing as Curator's SUSPENDED-to-LOST timer does: by then
// another client can already hold the lock.
//
// The arithmetic uses the session timeout the lock was given; it must be
// the one the servers granted. Servers clamp a requested timeout to
// [2, 20] tick times by default, so a client that asks for more than the
// servers allow must pass the granted value.
package hold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
)

// Reasons a hold ends, as returned by Err.
var (
	ErrReleased       = errors.New("released")
	ErrNodeDeleted    = errors.New("node deleted")
	ErrSessionExpired = errors.New("session expired")
	ErrCutOff         = errors.New("cut off from the ensemble long enough for the session to expire")
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

	mu     sync.Mutex // guards ended and onLoss
	ended  bool
	onLoss func(reason error)

	// A cut-off ends only a hold: a queued contender that reconnects in
	// time with its session still has its place, and one whose session
	// expired learns it from the session id. overdue records a cut-off
	// that happened while queued, for Acquired.
	holding atomic.Bool
	overdue atomic.Bool
}

// Watch reads path once with a data watch and starts watching it. The stat
// returned is the node's, from that first read. It fails with
// ErrNodeDeleted when the node is already gone, and with ErrSessionExpired
// when the node belongs to another session than conn's current one: a node
// left by an expired session must never be taken for ours.
func Watch(ctx context.Context, c *zkop.Client, path string) (*Monitor, *zk.Stat, error) {
	m, stat, err := watch(ctx, c, path)
	if err == nil {
		m.Acquired()
	}
	return m, stat, err
}

// WatchQueued is Watch for a contender that does not hold the lock yet:
// being cut off does not end it until Acquired is called.
func WatchQueued(ctx context.Context, c *zkop.Client, path string) (*Monitor, *zk.Stat, error) {
	return watch(ctx, c, path)
}

func watch(ctx context.Context, c *zkop.Client, path string) (*Monitor, *zk.Stat, error) {
	session := c.Conn.SessionID()
	_, stat, ev, err := c.GetW(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, ErrNodeDeleted
	}
	if err != nil {
		return nil, nil, err
	}
	if stat.EphemeralOwner != session {
		return nil, nil, fmt.Errorf("%w: %s belongs to session %#x, ours is %#x", ErrSessionExpired, path, stat.EphemeralOwner, session)
	}
	m := &Monitor{c: c, path: path, session: session, czxid: stat.Czxid,
		done: make(chan struct{}), stop: make(chan struct{}), exited: make(chan struct{})}
	m.requests, m.cancel = context.WithCancel(context.Background())
	go m.run(ev)
	return m, stat, nil
}

// Acquired tells a monitor started by WatchQueued that its contender now
// holds the lock. If the client is cut off still, and has been for too
// long, the hold ends at once. (Connected again with the same session, it
// is not cut off: the session, and so the node, is alive.)
func (m *Monitor) Acquired() {
	m.holding.Store(true)
	if m.overdue.Load() && m.c.Conn.State() != zk.StateHasSession {
		m.end(ErrCutOff)
	}
}

// Done is closed when the hold ends.
func (m *Monitor) Done() <-chan struct{} { return m.done }

// Err returns why the hold ended, or nil while it lasts.
func (m *Monitor) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

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
// whichever goroutine ends it, before Done closes. f must not block or
// call the Monitor. The locks use it to log a loss when it happens, not
// when their owner next looks, and before the owner can see Done closed.
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
		f := m.onLoss
		m.mu.Unlock()
		if f != nil && reason != ErrReleased {
			f(reason)
		}
		close(m.done)
		close(m.stop)
		m.cancel()
	})
}

// pollEvery is how often the connection state is sampled.
func (m *Monitor) pollEvery() time.Duration {
	return max(min(m.c.SessionTimeout/8, 250*time.Millisecond), 10*time.Millisecond)
}

// readTimeout is go-zookeeper's: a connection that has received nothing
// for this long is closed and the client reconnects.
func readTimeout(sessionTimeout time.Duration) time.Duration { return sessionTimeout * 2 / 3 }

func (m *Monitor) run(ev <-chan zk.Event) {
	defer close(m.exited)
	tick := time.NewTicker(m.pollEvery())
	defer tick.Stop()
	var cut *cutoff // set while the connection is down
	defer func() { cut.stop() }()
	for {
		select {
		case <-m.stop:
			return
		case e := <-ev:
			ev = nil
			if reason := m.onEvent(e); reason != nil {
				m.end(reason)
				return
			}
			if cut == nil { // a data change (our own renewal, say): watch again now, not a tick later
				ev = m.rearm()
			}
		case <-cut.C():
			if m.c.Conn.State() == zk.StateHasSession {
				cut = nil // back with the same session just now; the next tick checks the id
				continue
			}
			if left := time.Until(m.lossAt(cut.seen)); left > 0 {
				cut.timer.Reset(left) // heard from the servers since the cut-off began
				continue
			}
			m.overdue.Store(true)
			if m.holding.Load() {
				m.end(ErrCutOff)
				return
			}
		case <-tick.C:
			if reason := m.onTick(&cut); reason != nil {
				m.end(reason)
				return
			}
			if ev == nil && cut == nil {
				ev = m.rearm()
			}
		}
	}
}

// cutoff is one spell without a connection, as the ticks saw it.
type cutoff struct {
	seen  time.Time // the first tick that found the connection down
	timer *time.Timer
}

// C is the timer's channel, or nil (blocks forever) when there is no spell.
func (c *cutoff) C() <-chan time.Time {
	if c == nil {
		return nil
	}
	return c.timer.C
}

func (c *cutoff) stop() {
	if c != nil {
		c.timer.Stop()
	}
}

// lossAt is when a hold cut off since seen must be given up: a session
// timeout, less a tenth kept in hand, after the last moment the servers
// surely heard from the client. That moment is no earlier than the last
// answer the client got, nor than a read timeout before the tick ahead of
// seen (go-zookeeper gives up a connection that has been silent that
// long). A reconnection too brief for the ticks to see still moves the
// first of these forward, through the lock's own requests.
func (m *Monitor) lossAt(seen time.Time) time.Time {
	return lossAt(seen, m.c.LastHeard(), m.c.SessionTimeout, m.pollEvery())
}

func lossAt(seen, lastHeard time.Time, sessionTimeout, poll time.Duration) time.Time {
	heard := seen.Add(-poll - readTimeout(sessionTimeout))
	if lastHeard.After(heard) {
		heard = lastHeard
	}
	return heard.Add(sessionTimeout - sessionTimeout/10)
}

// onEvent classifies one watch event; nil means "still held, re-arm".
func (m *Monitor) onEvent(e zk.Event) error {
	m.c.Notified()
	switch {
	case e.Type == zk.EventNodeDeleted:
		return ErrNodeDeleted
	case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrSessionExpired):
		return ErrSessionExpired
	case e.Type == zk.EventNotWatching:
		return fmt.Errorf("%w: %v", ErrCutOff, e.Err)
	}
	return nil
}

// onTick checks the session and the connection. The first tick that
// finds the connection down starts the cut-off timer; a tick that finds
// the session back stops it.
func (m *Monitor) onTick(cut **cutoff) error {
	if sid := m.c.Conn.SessionID(); sid != 0 && sid != m.session {
		return ErrSessionExpired
	}
	if m.c.Conn.State() == zk.StateHasSession {
		(*cut).stop()
		*cut = nil
		m.overdue.Store(false)
		return nil
	}
	if *cut == nil {
		// The link may have gone right after the previous tick.
		now := time.Now()
		*cut = &cutoff{seen: now, timer: time.NewTimer(max(m.lossAt(now).Sub(now), 0))}
	}
	return nil
}

// rearm sets a fresh data watch after a data change fired the last one.
// A failed read is left to the next tick: either the connection is down
// (onTick counts it) or the node is gone (the next rearm reports it).
//
// The node at our path is ours only if it is the very node we watched:
// another Mutex on the same connection can make it again, with our
// session as its owner, while we were disconnected, and the server then
// reports it to our watch as a data change. The creation zxid tells.
func (m *Monitor) rearm() <-chan zk.Event {
	ctx, cancel := context.WithTimeout(m.requests, m.c.SessionTimeout)
	defer cancel()
	_, stat, ev, err := m.c.GetW(ctx, m.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		m.end(ErrNodeDeleted)
	case err == nil && stat.Czxid != m.czxid:
		m.end(fmt.Errorf("%w: %s was made again by session %#x", ErrNodeDeleted, m.path, stat.EphemeralOwner))
	case err == nil && stat.EphemeralOwner != m.session:
		m.end(ErrSessionExpired)
	case err == nil:
		return ev
	}
	return nil
}
