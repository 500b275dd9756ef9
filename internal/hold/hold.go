// Package hold watches one lock node for as long as its owner cares and
// tells the owner, through a channel, when the node can no longer be
// trusted to be there: it was deleted, its session expired, or the client
// has been cut off from the ensemble for longer than the session timeout.
//
// The last case is the one a client cannot observe directly. While it is
// disconnected it does not know whether the server has already expired its
// session; after a full session timeout without contact it must assume so,
// as Curator does when it moves a connection from SUSPENDED to LOST.
package hold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
)

// Reasons a hold ends, as returned by Err.
var (
	ErrReleased       = errors.New("hold: released")
	ErrNodeDeleted    = errors.New("hold: node deleted")
	ErrSessionExpired = errors.New("hold: session expired")
	ErrCutOff         = errors.New("hold: no contact with the ensemble for longer than the session timeout")
)

// Monitor watches one node. Done closes when the hold ends for any reason;
// Err then says which.
type Monitor struct {
	c       *zkop.Client
	path    string
	session int64
	done    chan struct{}
	stop    chan struct{}
	once    sync.Once
	err     error
	exited  chan struct{}

	mu     sync.Mutex // guards ended and onLoss
	ended  bool
	onLoss func(reason error)
}

// Watch reads path once with a data watch and starts watching it. The stat
// returned is the node's, from that first read. It fails with
// ErrNodeDeleted when the node is already gone, and with ErrSessionExpired
// when the node belongs to another session than conn's current one: a node
// left by an expired session must never be taken for ours.
func Watch(ctx context.Context, c *zkop.Client, path string) (*Monitor, *zk.Stat, error) {
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
	m := &Monitor{c: c, path: path, session: session,
		done: make(chan struct{}), stop: make(chan struct{}), exited: make(chan struct{})}
	go m.run(ev)
	return m, stat, nil
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
	})
}

// pollEvery is how often the connection state is sampled; the loss of a
// cut-off client is reported at most this late.
func (m *Monitor) pollEvery() time.Duration {
	return max(min(m.c.SessionTimeout/8, 250*time.Millisecond), 10*time.Millisecond)
}

func (m *Monitor) run(ev <-chan zk.Event) {
	defer close(m.exited)
	tick := time.NewTicker(m.pollEvery())
	defer tick.Stop()
	var cutSince time.Time
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
		case <-tick.C:
			if reason := m.onTick(&cutSince); reason != nil {
				m.end(reason)
				return
			}
			if ev == nil && cutSince.IsZero() {
				ev = m.rearm()
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
	case e.Type == zk.EventNotWatching:
		return fmt.Errorf("%w: %v", ErrCutOff, e.Err)
	}
	return nil
}

// onTick checks the session and how long the connection has been down.
func (m *Monitor) onTick(cutSince *time.Time) error {
	if sid := m.c.Conn.SessionID(); sid != 0 && sid != m.session {
		return ErrSessionExpired
	}
	if m.c.Conn.State() == zk.StateHasSession {
		*cutSince = time.Time{}
		return nil
	}
	if cutSince.IsZero() {
		*cutSince = time.Now()
	}
	if time.Since(*cutSince) > m.c.SessionTimeout {
		return ErrCutOff
	}
	return nil
}

// rearm sets a fresh data watch after a data change fired the last one.
// A failed read is left to the next tick: either the connection is down
// (onTick counts it) or the node is gone (the next rearm reports it).
func (m *Monitor) rearm() <-chan zk.Event {
	ctx, cancel := context.WithTimeout(context.Background(), m.c.SessionTimeout)
	defer cancel()
	_, stat, ev, err := m.c.GetW(ctx, m.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		m.end(ErrNodeDeleted)
	case err == nil && stat.EphemeralOwner != m.session:
		m.end(ErrSessionExpired)
	case err == nil:
		return ev
	}
	return nil
}
