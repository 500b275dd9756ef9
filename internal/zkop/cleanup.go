package zkop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// Later runs attempt in the background until it reports done. It
// makes attempts only while the connection has a session, pausing after
// each failed one (20ms, doubling up to 1s); while the connection is down
// it looks for it every 50ms instead, so that requests do not pile up in
// go-zookeeper's queue meanwhile. Each attempt gets a context bounded by
// the session timeout.
//
// It gives up when an attempt fails with an error that says "no" rather
// than "not now" (see isTransient), and, as a clean-up of this session's
// ephemeral nodes may, when the connection no longer has the session it
// had when Later was called (that session, and every ephemeral node
// of it, is gone), or when the connection has been closed (closing it ends
// the session). The goroutine ends with it: nothing outlives the session,
// and a closed connection stops it within a few tens of milliseconds.
//
// It does not give up because time has passed. A client cut off from a
// working ensemble for a session timeout will find its session expired on
// reconnecting, and stops then. But while the ensemble has no quorum, no
// session expires at all, and a new leader gives every session a fresh
// timeout: a client that reconnects soon enough finds its session, and its
// nodes, alive, and must still delete them.
//
// go-zookeeper does not say when a connection has been closed; the
// session's keeper tells (liveness.Clock.ConnClosed, the one place that
// rule lives), and Later stops then.
func (c *Client) Later(attempt func(ctx context.Context) (done bool, err error)) {
	c.later(attempt, false)
}

// LaterAnySession is Later for an attempt that is safe on any session of
// the connection, such as deleting the nodes named with one
// acquisition's GUID: it does not stop when the session changes, and an
// expiry met on the way is one more reason to try again. A create that
// go-zookeeper had queued when the session expired goes out on the next
// session (v1.0.4's conn.go: loop goes on to the next connect after an
// expired authenticate, and connect flushes sendChan only when a whole
// round of dials has failed, retryStart), so the node to undo can belong
// to a session that did not exist when the undo was asked for.
func (c *Client) LaterAnySession(attempt func(ctx context.Context) (done bool, err error)) {
	c.later(attempt, true)
}

func (c *Client) later(attempt func(ctx context.Context) (done bool, err error), anySession bool) {
	const poll = 50 * time.Millisecond // how often to look for the connection while it is down
	sid := c.Conn.SessionID()
	go func() {
		var b Backoff
		for anySession || c.Conn.SessionID() == sid {
			pause := poll
			if c.Conn.State() == zk.StateHasSession {
				ctx, cancel := context.WithTimeout(context.Background(), c.SessionTimeout())
				done, err := attempt(ctx)
				cancel()
				if done || (err != nil && !isTransient(err) && !(anySession && errors.Is(err, zk.ErrSessionExpired))) {
					return
				}
				pause = b.Next()
			}
			if c.pauseUnlessClosed(pause) {
				return
			}
		}
	}()
}

// pauseUnlessClosed waits for d and reports false, or reports true as
// soon as the connection is known to be closed.
func (c *Client) pauseUnlessClosed(d time.Duration) (closed bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.Clock.ConnClosed():
		return true
	case <-t.C:
		return false
	}
}

// ErrConnClosed is AwaitSession's answer for a connection that has been
// closed. It wraps zk.ErrConnectionClosed, but it is not Transient: a
// closed connection does not come back.
var ErrConnClosed = fmt.Errorf("the connection has been closed: %w", zk.ErrConnectionClosed)

// DialRound is how long a retry waits for a session (AwaitSession) before
// it counts as one more failure: about the time go-zookeeper takes to fail
// its queued requests with ErrNoServer while it can reach no server.
const DialRound = time.Second

// AwaitSession waits until the connection has a session, at most within
// (no limit when within <= 0), and returns nil then. A retry after a lost connection calls it first, so
// that it sends nothing on a connection that has been closed: go-zookeeper
// v1.0.4 answers a request that races with Close up to three times, into a
// channel with room for two, and its event loop then blocks for good.
//
// Right after Close returns, go-zookeeper can still report the session
// for a moment (until its receive loop has seen the socket close), so a
// retry pauses before it calls AwaitSession, as a retry does anyway.
//
// It fails with ErrConnClosed (which wraps zk.ErrConnectionClosed) when the
// session's keeper has found the connection closed (Later's rule), with
// an error wrapping zk.ErrNoServer when
// within passes without a session (the way go-zookeeper fails its queued
// requests after each round of dials in vain: Transient), and with ctx's
// error when ctx ends first.
func (c *Client) AwaitSession(ctx context.Context, within time.Duration) error {
	const poll = 50 * time.Millisecond
	deadline := time.Now().Add(within)
	for {
		if c.Conn.State() == zk.StateHasSession {
			return nil
		}
		if within > 0 && time.Now().After(deadline) {
			return fmt.Errorf("no session for %v: %w", within, zk.ErrNoServer)
		}
		select {
		case <-c.Clock.ConnClosed():
			return ErrConnClosed
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// The module deletes a node in two ways, each with one verb. A node whose
// name is ours alone (a queue node, named with its acquisition's GUID) is
// deleted by DeleteOwn: by name, at any version, at once or later. A node
// at a path others use too (the naive lock's fixed path) is deleted only
// while a read shows it is still the one we made, at the version read:
// the naive lock's guarded delete, which lives with it (naive/fixed.go).

// DeleteOwn deletes path, one of our own uniquely named nodes, at any
// version. When the delete cannot complete now (ctx done, connection
// down) it is handed to DeleteLater and DeleteOwn returns nil: the node
// will not outlive the session. Other errors (no node, no auth) are
// returned as they are.
func (c *Client) DeleteOwn(ctx context.Context, path string) error {
	err := c.Delete(ctx, path, -1)
	if isTransient(err) || (err != nil && ctx.Err() != nil) {
		c.DeleteLater(path)
		return nil
	}
	return err
}

// DeleteLater is DeleteOwn in the background (Later), for a node whose
// create the caller did not wait for: it deletes path only if it is an
// ephemeral node of this client's session, retrying while the ensemble
// cannot be reached, and stops once the delete succeeded or found no node
// of ours.
func (c *Client) DeleteLater(path string) {
	sid := c.Conn.SessionID()
	c.Later(func(ctx context.Context) (bool, error) {
		err := c.deleteOurs(ctx, path, sid)
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			return true, nil
		}
		return false, err
	})
}

// Transient reports whether a request failed for want of a connection,
// its outcome unknown or not applied, rather than being refused: the
// connection went while it was in flight (ErrConnectionClosed, or the raw
// network error when it broke as the request was written), no server
// could be reached (while disconnected, go-zookeeper fails its queued
// requests with ErrNoServer each time it has tried every server in vain),
// or the session moved to another server. The locks retry these. A ctx
// that ended is not one, although context.DeadlineExceeded is a net.Error,
// and neither is ErrConnClosed.
func Transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, ErrConnClosed) {
		return false
	}
	var netErr net.Error
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.As(err, &netErr)
}

// Sleep waits d or until ctx ends, and then returns ctx's error: the pause
// of the locks' retry loops.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isTransient is Transient for the background clean-up, which also
// outlives a cancelled attempt and a connection that is closing.
func isTransient(err error) bool {
	return Transient(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, zk.ErrClosing)
}

// deleteOurs deletes path if it is an ephemeral node of session sid, at
// the version read: the node may be a persistent parent, or come from a
// create whose answer was lost. A BadVersion means that our own node was
// written between the read and the delete (the semaphore's announcement
// can still be on its way): it is read again, until ctx ends, and deleted
// only if it is still the node first read (same czxid).
func (c *Client) deleteOurs(ctx context.Context, path string, sid int64) error {
	var czxid int64 // of the node first read
	for {
		_, stat, err := c.GetSynced(ctx, path) // the create may be one whose answer was lost
		if err != nil {
			return err
		}
		if czxid == 0 {
			czxid = stat.Czxid
		}
		if stat.EphemeralOwner != sid || stat.Czxid != czxid {
			return zk.ErrNoNode // ours is gone; this one belongs to someone else
		}
		if err := c.DeleteOnSession(ctx, path, stat.Version, sid); !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
	}
}
