package bench

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
)

// SessionTimeout is the session timeout every bench session asks for.
const SessionTimeout = 10 * time.Second

// conn is the session's connection, for the peers and the bench's own
// requests.
func (s *session) conn() *zk.Conn { return s.zs.Conn() }

// session is one ZooKeeper session with a count of the watch events that
// reached it on the wire. go-zookeeper hands every event it decodes to
// the event callback before any watcher channel sees it, so the count is
// the same for every lock, including the peer that keeps no statistics.
type session struct {
	zs *zklocks.Session

	events atomic.Int64 // watch notifications received (not session events)
	// release points at the run's latest release time (an offset from
	// base); wakeAt is when the first watch event after that release
	// reached this session, as an offset from base too.
	release atomic.Pointer[atomic.Int64]
	base    atomic.Int64
	wakeAt  atomic.Int64
	// armed asks the connection to note, in sentAt, when it next writes a
	// packet: the contender arms it just before Unlock, so sentAt is when
	// the release's request (the delete) left the client.
	armed  atomic.Bool
	sentAt atomic.Int64
	// byPath counts the watch events by znode path, so that the events
	// about a node of this session's own (its hold monitor's data watch,
	// fired by its own setData or delete) can be told apart from the ones
	// that woke it as a contender.
	mu     sync.Mutex
	byPath map[string]pathEvents
	// holding is set from the moment this session's contender's Lock
	// returns until its Unlock returns. A holder waits for nothing, so an
	// event that reaches it then is about its own node (its monitor's
	// watch, fired by its own setData or delete): holdSelf counts them,
	// holdSelfDeleted the NodeDeleted ones among them.
	holding                   atomic.Bool
	holdSelf, holdSelfDeleted atomic.Int64
}

// epoch is the origin of clock: one monotonic clock for the whole process,
// shared by the contenders and the sessions' event callbacks.
var epoch = time.Now()

func clock() time.Duration { return time.Since(epoch) }

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connect opens a session pinned to server (one address) and waits until
// it is established.
func connect(ctx context.Context, server string) (*session, error) {
	s := &session{byPath: map[string]pathEvents{}}
	s.wakeAt.Store(-1)
	ready := make(chan struct{})
	var closed atomic.Bool
	cb := func(ev zk.Event) {
		if ev.Type == zk.EventSession {
			if ev.State == zk.StateHasSession && closed.CompareAndSwap(false, true) {
				close(ready)
			}
			return
		}
		if ev.Type == zk.EventNotWatching {
			return
		}
		if rp := s.release.Load(); rp != nil {
			now := int64(clock()) - s.base.Load()
			rel := rp.Load()
			for {
				w := s.wakeAt.Load()
				if rel < 0 || w >= rel || now < rel || s.wakeAt.CompareAndSwap(w, now) {
					break
				}
			}
		}
		s.events.Add(1)
		if s.holding.Load() {
			s.holdSelf.Add(1)
			if ev.Type == zk.EventNodeDeleted {
				s.holdSelfDeleted.Add(1)
			}
			return
		}
		s.mu.Lock()
		pe := s.byPath[ev.Path]
		pe.all++
		if ev.Type == zk.EventNodeDeleted {
			pe.deleted++
		}
		s.byPath[ev.Path] = pe
		s.mu.Unlock()
	}
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &tapConn{Conn: c, s: s}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, SessionTimeout)
	defer cancel()
	zs, err := zklocks.Connect(cctx, []string{server}, SessionTimeout, zklocks.WithZKLogger(nopLogger{}),
		zklocks.WithZKOptions(zk.WithEventCallback(cb), zk.WithDialer(dial)))
	if err != nil {
		return nil, fmt.Errorf("bench: connect %s: %w", server, err)
	}
	s.zs = zs
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		zs.Close()
		return nil, ctx.Err()
	}
}

// connectAll opens n sessions, spread round-robin over the servers so
// every run sees the same mix of same-member and cross-member handoffs.
func connectAll(ctx context.Context, servers []string, n int) ([]*session, error) {
	out := make([]*session, 0, n)
	type res struct {
		i   int
		s   *session
		err error
	}
	ch := make(chan res, n)
	for i := range n {
		go func() {
			s, err := connect(ctx, servers[i%len(servers)])
			ch <- res{i, s, err}
		}()
	}
	all := make([]*session, n)
	var firstErr error
	for range n {
		r := <-ch
		if r.err != nil && firstErr == nil {
			firstErr = r.err
		}
		all[r.i] = r.s
	}
	if firstErr != nil {
		closeAll(all)
		return nil, firstErr
	}
	out = append(out, all...)
	return out, nil
}

// closeAll closes the sessions in parallel: each close waits for its
// closeSession, a quorum write.
func closeAll(ss []*session) {
	var wg sync.WaitGroup
	for _, s := range ss {
		if s != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.zs.Close()
			}()
		}
	}
	wg.Wait()
}

// reset forgets the events counted so far.
func (s *session) reset() {
	s.events.Store(0)
	s.holdSelf.Store(0)
	s.holdSelfDeleted.Store(0)
	s.mu.Lock()
	clear(s.byPath)
	s.mu.Unlock()
}

// pathEvents counts the events about one node.
type pathEvents struct{ all, deleted int64 }

// eventsOn returns the events received about the given nodes: all of
// them, and the NodeDeleted ones.
func (s *session) eventsOn(nodes map[string]bool) (all, deleted int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range nodes {
		all += s.byPath[p].all
		deleted += s.byPath[p].deleted
	}
	return all, deleted
}

// tapConn notes when an armed session writes its next packet.
type tapConn struct {
	net.Conn
	s *session
}

func (c *tapConn) Write(b []byte) (int, error) {
	if c.s.armed.CompareAndSwap(true, false) {
		c.s.sentAt.Store(int64(clock()))
	}
	return c.Conn.Write(b)
}

// arm prepares sentAt for the next packet.
func (s *session) arm() {
	s.sentAt.Store(-1)
	s.armed.Store(true)
}
