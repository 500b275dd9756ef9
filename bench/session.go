package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// SessionTimeout is the session timeout of every bench session; the locks
// are told the same value.
const SessionTimeout = 10 * time.Second

// session is one *zk.Conn with a count of the watch events that reached it
// on the wire. go-zookeeper hands every event it decodes to the event
// callback before any watcher channel sees it, so the count is the same
// for every lock, including the peer that keeps no statistics.
type session struct {
	conn *zk.Conn

	events atomic.Int64 // watch notifications received (not session events)
	// ownNode is the node of this session's latest hold. A NodeDeleted
	// event for it is the holder's own watch on the node it deletes (the
	// hold monitor of the zklocks variants), not a contender woken up.
	ownNode atomic.Pointer[string]
	self    atomic.Int64
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connect opens a session pinned to server (one address) and waits until
// it is established.
func connect(ctx context.Context, server string) (*session, error) {
	s := &session{}
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
		s.events.Add(1)
		if own := s.ownNode.Load(); ev.Type == zk.EventNodeDeleted && own != nil && *own == ev.Path {
			s.self.Add(1)
		}
	}
	conn, _, err := zk.Connect([]string{server}, SessionTimeout,
		zk.WithLogger(nopLogger{}), zk.WithEventCallback(cb))
	if err != nil {
		return nil, fmt.Errorf("bench: connect %s: %w", server, err)
	}
	s.conn = conn
	t := time.NewTimer(SessionTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		conn.Close()
		return nil, ctx.Err()
	case <-t.C:
		conn.Close()
		return nil, fmt.Errorf("bench: no session with %s after %v", server, SessionTimeout)
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

func closeAll(ss []*session) {
	for _, s := range ss {
		if s != nil {
			s.conn.Close()
		}
	}
}
