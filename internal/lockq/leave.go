package lockq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Release deletes our node after a hold, whatever its data version
// (zkop.Client.DeleteOwn: when the ensemble cannot be reached now, or ctx
// ends, the delete is done later, and the node does not outlive the
// session). It stops the watch on our node first, so that our own delete
// is not taken for a loss. It returns the loss (wrapping zklocks.ErrLockLost)
// when the hold had ended before, or found our node gone; else the
// delete's error, nil when it was done or is done later.
//
// Version -1 is safe here, and saves a round trip on the path of every
// handoff: the reentrant and timeout locks rewrite our node's data (the
// count, the lease), so a delete at the version seen at create would fail
// with BadVersion and have to read the node and delete again. Our node's
// name carries this acquisition's random GUID, which no other contender
// uses, so it can name no one else's node, now or later (a sequence
// number alone could: the lock path is a container, and once the server
// has removed it and someone has made it again, its counter starts over).
// At worst our node is already gone, and the delete finds nothing. The
// naive lock, whose every holder uses one fixed path, must never do this.
func (q *Queue) Release(ctx context.Context, n *Node) error {
	n.mon.Release()
	reason := n.mon.Err() // ErrReleased, unless the hold had ended before
	err := q.c.DeleteOwn(ctx, n.path)
	if errors.Is(err, zk.ErrNoNode) && errors.Is(reason, hold.ErrReleased) {
		// Gone after the monitor's last look: with the session (the delete
		// ran on the next one), or deleted behind our back.
		reason = hold.ErrNodeDeleted
		if q.sessionGone(n) {
			reason = hold.ErrSessionExpired
		}
	}
	if !errors.Is(reason, hold.ErrReleased) {
		return q.cfg.HoldLost(reason)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", n.path, err)
	}
	return nil
}

// cleanupBudget bounds how long a failed acquisition goes on abandoning
// its node before it returns (the session timeout does when it is
// shorter): long enough for the few requests of a clean-up on a working
// connection, and for a connection that is back within it; what cannot be
// done by then is done later.
const cleanupBudget = time.Second

// Abandon undoes a failed acquisition: it stops the watch on our node and
// deletes the node, and any twin of it. It uses a context of its own (the
// caller's is usually done: that is why the acquisition failed), bounded
// by cleanupBudget; when the connection has no session at all right now
// it does not wait even that long. Whatever it cannot finish is done
// later, until it is done, the session has changed (its nodes went with
// it), or the connection is closed (zkop.Client.Later). So Lock
// returns about when its ctx ends, and nothing of it outlives the session.
func (q *Queue) Abandon(ctx context.Context, n *Node) {
	if n.mon != nil {
		n.mon.Release()
	}
	if q.c.Conn.State() != zk.StateHasSession {
		// The ensemble cannot be reached now: waiting for it here would
		// only make Lock late.
		q.c.LaterAnySession(func(ctx context.Context) (bool, error) { return q.undo(ctx, n) })
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(q.c.SessionTimeout(), cleanupBudget))
	defer cancel()
	if n.path != "" {
		_ = q.c.DeleteOwn(cctx, n.path)
	}
	if !n.unsure {
		return
	}
	// A create may have been applied without our learning the name: find
	// the nodes by GUID and delete them. The failures in a row seen while
	// joining count: after as many as joining allows, it is left for later
	// at once (which stops soon on a closed connection).
	b := &n.fails
	for {
		done, err := q.sweep(cctx, n.GUID)
		switch {
		case done:
			return
		case cctx.Err() == nil && !zkop.Transient(err):
			return // refused (no auth, session expired: its nodes are gone), not "not now"
		case cctx.Err() != nil || q.pause(cctx, b, err, maxRetries, nil) != nil:
			guid := n.GUID
			q.c.LaterAnySession(func(ctx context.Context) (bool, error) { return q.sweep(ctx, guid) })
			return
		}
	}
}

// undo deletes the node of a failed acquisition and, when a create had
// an unknown outcome, every twin of it; it reports whether it got through.
func (q *Queue) undo(ctx context.Context, n *Node) (done bool, err error) {
	if n.path != "" {
		// By name, at any version: the name carries this acquisition's GUID.
		if err := q.c.Delete(ctx, n.path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return false, err
		}
	}
	if !n.unsure {
		return true, nil
	}
	return q.sweep(ctx, n.GUID)
}

// sweep deletes every child of the lock path that carries guid, and
// reports whether it got through. By name, at any version: a node named
// with an acquisition's GUID can only be one that acquisition created.
func (q *Queue) sweep(ctx context.Context, guid string) (done bool, err error) {
	names, err := q.findOurs(ctx, guid)
	if err != nil {
		return false, err
	}
	for _, name := range names {
		if err := q.c.Delete(ctx, q.path+"/"+name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return false, err
		}
	}
	return true, nil
}
