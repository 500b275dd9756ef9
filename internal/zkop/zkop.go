// Package zkop runs the ZooKeeper requests of one lock: every call honours
// a context, is counted, and a create whose answer arrives after the caller
// gave up is undone instead of being left behind.
//
// go-zookeeper's calls take no context: while the client is disconnected a
// request waits in its send queue until the connection comes back. Each call
// here therefore runs the request in its own goroutine and stops waiting
// when ctx is done. The goroutine ends when the request does (answer, or the
// connection is closed).
package zkop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/liveness"
)

// Client is the request side of one lock. Its zero value is not usable; use New.
type Client struct {
	Conn *zk.Conn
	// Clock is the proven clock of the session's leader, the Session's
	// one, shared by every lock made on it. Its timeout, the one the
	// servers granted, bounds each attempt of a background clean-up, and
	// the locks use it to decide when a client cut off from the ensemble
	// must consider its hold lost.
	Clock *liveness.Clock

	requests      atomic.Int64
	notifications atomic.Int64
}

// New returns a Client for conn, on its session's clock.
func New(conn *zk.Conn, clock *liveness.Clock) *Client {
	return &Client{Conn: conn, Clock: clock}
}

// SessionTimeout is the session timeout the servers granted.
func (c *Client) SessionTimeout() time.Duration { return c.Clock.Timeout() }

// Counts returns the requests sent and the watch events received so far.
func (c *Client) Counts() (requests, notifications int64) {
	return c.requests.Load(), c.notifications.Load()
}

// LeaderHeard returns the latest moment at which the leader provably
// refreshed the session (see internal/liveness for the rule), or the zero
// time. The clock is the connection's, shared by every lock on it:
// internal/hold gives a hold up nine tenths of a session timeout after
// this moment. The time carries its monotonic clock reading, so
// deadlines built on it ignore steps of the wall clock.
func (c *Client) LeaderHeard() time.Time { return c.Clock.Proven() }

// heard records the answer to a request sent at sent on session sid: it
// counts only when a server answered it (success, or one of the errors
// only a server gives), and on the session it was sent with
// (go-zookeeper resends what it had queued on the session it opens after
// an expiry). An error go-zookeeper makes up itself (a request too large
// for its buffer, an invalid path, a lost connection) proves nothing.
func (c *Client) heard(sent time.Time, sid int64, viaLeader bool, err error) {
	if !answeredByServer(err) || sid == 0 || c.Conn.SessionID() != sid {
		return
	}
	c.Clock.Answered(sid, sent, time.Now(), viaLeader)
}

// serverAnswers are errors that go-zookeeper reports only from a server's
// reply.
var serverAnswers = []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNoAuth, zk.ErrNotEmpty,
	zk.ErrNoChildrenForEphemerals}

func answeredByServer(err error) bool {
	if err == nil {
		return true
	}
	for _, e := range serverAnswers {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// closedFor turns go-zookeeper's "connection closed", which it answers
// both while between servers and for good after Close, into ErrConnClosed
// once the clock has found the connection closed: that one is not
// Transient, so no retry loop goes on against a connection that will not
// come back.
func (c *Client) closedFor(err error) error {
	if err == nil || !errors.Is(err, zk.ErrConnectionClosed) {
		return err
	}
	select {
	case <-c.Clock.ConnClosed():
		return ErrConnClosed
	default:
		return err
	}
}

// Notified counts one watch event received.
func (c *Client) Notified() { c.notifications.Add(1) }

// result carries one request's outcome out of its goroutine.
type result[T any] struct {
	val T
	err error
}

// call runs the read fn unless ctx is already done, and waits for it or
// for ctx.
func call[T any](ctx context.Context, c *Client, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return start(c, fn, false).wait(ctx, nil)
}

// callLeader is call for a write or a sync, which the servers send
// through the leader. When ctx wins, abandoned (if not nil) receives fn's late
// outcome.
func callLeader[T any](ctx context.Context, c *Client, fn func() (T, error), abandoned func(T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	return start(c, fn, true).wait(ctx, abandoned)
}

// Pending is a request sent ahead of its use: its answer is read with
// Wait, once.
type Pending[T any] struct{ ch chan result[T] }

// start counts fn as a request and runs it in a goroutine of its own;
// viaLeader: fn is a write or a sync.
func start[T any](c *Client, fn func() (T, error), viaLeader bool) *Pending[T] {
	c.requests.Add(1)
	p := &Pending[T]{ch: make(chan result[T], 1)}
	go func() {
		sent, sid := time.Now(), c.Conn.SessionID()
		if viaLeader {
			c.Clock.Sent(sid, sent)
		}
		v, err := fn()
		c.heard(sent, sid, viaLeader, err)
		p.ch <- result[T]{v, c.closedFor(err)}
	}()
	return p
}

// Wait returns the request's answer, or ctx's error when ctx ends first.
func (p *Pending[T]) Wait(ctx context.Context) (T, error) { return p.wait(ctx, nil) }

func (p *Pending[T]) wait(ctx context.Context, abandoned func(T, error)) (T, error) {
	select {
	case r := <-p.ch:
		return r.val, r.err
	case <-ctx.Done():
		if abandoned != nil {
			go func() { r := <-p.ch; abandoned(r.val, r.err) }()
		}
		var zero T
		return zero, ctx.Err()
	}
}

// Create creates a node. If ctx ends before the answer and the create then
// succeeds, the new node is deleted in the background.
func (c *Client) Create(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	return callLeader(ctx, c, func() (string, error) {
		return c.Conn.Create(path, data, flags, acl)
	}, func(created string, err error) {
		if err == nil {
			c.DeleteLater(created)
		}
	})
}

// CreateUndo is Create for a node whose clean-up the caller knows better
// than its name can tell: an EPHEMERAL_SEQUENTIAL node named with an
// acquisition's GUID, say. If ctx ends before the answer, undo runs in
// the background (LaterAnySession) once the create has been answered,
// when that answer is a success or leaves the outcome unknown (the
// connection went while it was in flight: the node may exist). A create
// that ctx abandoned can be sent after the caller's own clean-up has
// looked for its node (go-zookeeper sends it from a goroutine of its
// own), so only an undo that runs after its answer is sure to see it.
func (c *Client) CreateUndo(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL,
	undo func(ctx context.Context) (done bool, err error)) (string, error) {
	return callLeader(ctx, c, func() (string, error) {
		return c.Conn.Create(path, data, flags, acl)
	}, func(_ string, err error) {
		if err == nil || Transient(err) {
			c.LaterAnySession(undo)
		}
	})
}

// Get reads a node's data and stat.
func (c *Client) Get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	type got struct {
		data []byte
		stat *zk.Stat
	}
	g, err := call(ctx, c, func() (got, error) {
		d, s, err := c.Conn.Get(path)
		return got{d, s}, err
	})
	return g.data, g.stat, err
}

// GetW reads a node and leaves a data watch on it (fires on change and delete).
func (c *Client) GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	type got struct {
		data []byte
		stat *zk.Stat
		ev   <-chan zk.Event
	}
	g, err := call(ctx, c, func() (got, error) {
		d, s, ev, err := c.Conn.GetW(path)
		return got{d, s, ev}, err
	})
	return g.data, g.stat, g.ev, err
}

// ExistsW checks a node and leaves an exists watch on it (fires on create,
// change and delete; on a missing node it waits for a create).
func (c *Client) ExistsW(ctx context.Context, path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	type got struct {
		ok   bool
		stat *zk.Stat
		ev   <-chan zk.Event
	}
	g, err := call(ctx, c, func() (got, error) {
		ok, s, ev, err := c.Conn.ExistsW(path)
		return got{ok, s, ev}, err
	})
	return g.ok, g.stat, g.ev, err
}

// Children lists a node's children.
func (c *Client) Children(ctx context.Context, path string) ([]string, error) {
	return call(ctx, c, c.children(path))
}

// ChildrenW lists a node's children and leaves a child watch on it,
// which fires on the next create or delete of a child (or of the node).
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, <-chan zk.Event, error) {
	type got struct {
		kids []string
		ev   <-chan zk.Event
	}
	g, err := call(ctx, c, func() (got, error) {
		kids, _, ev, err := c.Conn.ChildrenW(path)
		return got{kids, ev}, err
	})
	return g.kids, g.ev, err
}

// ChildrenAhead sends a listing of a node's children now, for a caller
// that has something else to send before it needs the answer.
func (c *Client) ChildrenAhead(path string) *Pending[[]string] {
	return start(c, c.children(path), false)
}

func (c *Client) children(path string) func() ([]string, error) {
	return func() ([]string, error) {
		kids, _, err := c.Conn.Children(path)
		return kids, err
	}
}

// Sync makes the server this client is connected to catch up with the
// leader on path, so that a read after it sees every write the ensemble
// committed before the Sync was sent. A plain read is only as fresh as
// that server, which may lag behind another client's completed write.
func (c *Client) Sync(ctx context.Context, path string) error {
	_, err := callLeader(ctx, c, func() (string, error) {
		return c.Conn.Sync(path)
	}, nil)
	return err
}

// GetSynced is Get after a Sync. It is the read that learns the outcome of
// one of our own writes whose answer the connection took with it: the
// client may have reconnected to a server that has not applied that write
// yet, and a session's guarantee to see its own writes covers only writes
// whose answers it has seen.
func (c *Client) GetSynced(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	if err := c.Sync(ctx, path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, nil, err
	}
	return c.Get(ctx, path)
}

// Set writes a node's data if its version still matches.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (*zk.Stat, error) {
	return c.SetCounted(ctx, path, data, version, nil)
}

// SetCounted is Set that calls sent (when not nil) as the request goes
// out, and not when ctx was done before: counts of writes sent then match
// the leader's proposals.
func (c *Client) SetCounted(ctx context.Context, path string, data []byte, version int32, sent func()) (*zk.Stat, error) {
	return callLeader(ctx, c, func() (*zk.Stat, error) {
		if sent != nil {
			sent()
		}
		return c.Conn.Set(path, data, version)
	}, nil)
}

// ErrNoSessionNow is DeleteOnSession's answer when the client does not
// have the session the delete is for right now. It wraps zk.ErrNoServer,
// so it is Transient: try again once the session is back.
var ErrNoSessionNow = fmt.Errorf("not connected with the session of the node: %w", zk.ErrNoServer)

// DeleteOnSession deletes path at version only if the client is
// connected with session sid right now, and otherwise sends nothing and
// fails with ErrNoSessionNow (or, when the client has another session,
// with zk.ErrSessionExpired: sid is gone, and its ephemeral nodes with it).
//
// It is the delete of a node whose name another client can reuse (the
// naive lock's fixed path). go-zookeeper keeps a request that it could
// not send yet across a reconnection, even one that finds the session
// expired and opens a new one: a versioned delete queued while the
// client had no session would go out on the next session and could
// remove the next holder's node, whose version is 0 just like ours was.
// The check narrows that to a request queued in the instant between the
// check and its write, on a connection that dies in that instant and is
// followed by one that finds the session expired without go-zookeeper
// failing a whole round of dials meanwhile (see the naive lock's doc).
func (c *Client) DeleteOnSession(ctx context.Context, path string, version int32, sid int64) error {
	switch {
	case c.Conn.SessionID() != sid && c.Conn.SessionID() != 0:
		return fmt.Errorf("delete %s: session %#x is gone: %w", path, sid, zk.ErrSessionExpired)
	case c.Conn.State() != zk.StateHasSession || c.Conn.SessionID() != sid:
		return ErrNoSessionNow
	}
	return c.Delete(ctx, path, version)
}

// Delete deletes a node if its version still matches.
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	_, err := callLeader(ctx, c, func() (struct{}, error) {
		return struct{}{}, c.Conn.Delete(path, version)
	}, nil)
	return err
}

// EnsureParents creates every missing ancestor of path as a persistent
// node, and path itself too when container is true: a container node, which
// the server removes once its last child is gone, falling back to a
// persistent node on servers older than 3.5.1 (ZOOKEEPER-2163).
//
// It reads before it writes: the nodes that exist already are found with
// exists (the deepest first: once one exists, its ancestors do too) and
// only the missing ones are created. A create of a node that exists is
// no read: the servers log it as an error transaction, a quorum write
// like any other, and every contender that finds the lock path missing
// at once (all of them, on a fresh path) would otherwise pay one per
// ancestor (zklocks txns counted them: multilock's extra writes).
func (c *Client) EnsureParents(ctx context.Context, path string, ancestors []string, container bool, acl []zk.ACL) error {
	nodes := ancestors
	if container {
		nodes = append(slices.Clip(ancestors), path)
	}
	// missing is the index of the first node to create: the nodes before
	// it exist.
	missing := 0
	for i := len(nodes) - 1; i >= 0; i-- {
		ok, err := call(ctx, c, func() (bool, error) {
			ok, _, err := c.Conn.Exists(nodes[i])
			return ok, err
		})
		if err != nil {
			return err
		}
		if ok {
			missing = i + 1
			break
		}
	}
	for i := missing; i < len(nodes); i++ {
		if err := c.createIfMissing(ctx, nodes[i], container && i == len(nodes)-1, acl); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) createIfMissing(ctx context.Context, p string, container bool, acl []zk.ACL) error {
	var err error
	if container {
		_, err = callLeader(ctx, c, func() (string, error) {
			return c.Conn.CreateContainer(p, nil, zk.FlagContainer, acl)
		}, nil)
		if unimplemented(err) {
			container = false // server without container support
		}
	}
	if !container {
		_, err = callLeader(ctx, c, func() (string, error) {
			return c.Conn.Create(p, nil, zk.FlagPersistent, acl)
		}, nil)
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// unimplemented reports whether a server refused a request it does not
// know: servers before 3.5.1 answer a create-container with UNIMPLEMENTED
// (-6), which go-zookeeper v1.0.4 has no error value for and reports as a
// bare "unknown error: -6".
func unimplemented(err error) bool {
	return err != nil && (errors.Is(err, zk.ErrUnknown) || errors.Is(err, zk.ErrAPIError) ||
		err.Error() == "unknown error: -6")
}
