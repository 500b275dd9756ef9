package lockq

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

const createFlags = zk.FlagEphemeral | zk.FlagSequence

// Join creates our EPHEMERAL_SEQUENTIAL node, _c_<guid>-lock-<seq>, and
// starts watching it (as queued: being cut off does not end it until the
// hold begins). It makes the lock path, a container, when it is missing.
//
// When the connection goes while the create is in flight, the create may
// or may not have been applied. The GUID in the name tells: after the
// client reconnects, the children carrying it are ours (the recipe of
// ZooKeeper's docs, Curator's protected mode, kazoo's uuid prefix). A node
// with our GUID is taken only if it belongs to the session the client has
// now: after a session expiry, a listing can still show the node of the
// dead session until the server has removed it (CURATOR-604), and that
// node is about to vanish. ErrSessionExpired from the create means the
// node, if it was made, went with its session: create again.
func (q *Queue) Join(ctx context.Context, n *Node) error {
	sep := n.Sep
	if sep == "" {
		sep = LockSep
	}
	prefix := q.path + "/" + ProtectedPrefix + n.GUID + sep
	data := q.cfg.Data
	if n.Data != nil {
		data = n.Data
	}
	b := &n.fails
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var names []string
		n.listing = nil // one sent for a node we did not adopt shows no node of ours
		// A create that ctx abandons is answered later, maybe after
		// Abandon's sweep has looked: the sweep runs again then.
		guid := n.GUID
		node, err := q.c.CreateUndo(ctx, prefix, data, createFlags, q.cfg.ACL,
			func(ctx context.Context) (bool, error) { return q.sweep(ctx, guid) })
		switch {
		case err == nil:
			// The listing of step 2 does not depend on the watch on our
			// node: send it now, beside the watch, and save a round trip.
			n.listing = q.c.ChildrenAhead(q.path)
			names = []string{node[len(q.path)+1:]}
		case errors.Is(err, zk.ErrNoNode) && n.parents < maxParents:
			// The lock path is missing: make it (a container, which the
			// server removes once its last child is gone) and try again.
			n.parents++
			if err := q.c.EnsureParents(ctx, q.path, zkpath.Ancestors(q.path), true, q.cfg.ACL); err != nil {
				return fmt.Errorf("create the parents: %w", err)
			}
			continue
		case errors.Is(err, zk.ErrSessionExpired):
			if err := q.pause(ctx, b, err, maxRetries, nil); err != nil {
				return err
			}
			continue
		case zkop.Transient(err), ctx.Err() != nil:
			n.unsure = true
			if names, err = q.findAfterLoss(ctx, n, err); err != nil {
				return err
			}
		default:
			return fmt.Errorf("create: %w", err)
		}
		for _, name := range names {
			ok, err := q.adopt(ctx, n, name)
			if err != nil {
				n.unsure = true // name may be ours: abandon sweeps by GUID
				return err
			}
			if ok {
				n.fails = backoff{} // in a row: abandoning starts afresh
				return nil
			}
		}
		// None of them is ours (none was made, or they are a dead
		// session's): create again, with the same GUID. Any node with it
		// that is not the one we adopt is a twin to sweep.
		n.unsure = n.unsure || len(names) > 0
	}
}

// findAfterLoss waits until the client is back after a create that failed
// with err, and lists the nodes carrying our GUID. It waits for as long as
// ctx allows: an outage is no reason to give up (a closed connection is,
// and ends it with zkop.ErrConnClosed).
func (q *Queue) findAfterLoss(ctx context.Context, n *Node, err error) ([]string, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	b := &n.fails
	if err := q.retryWhenBack(ctx, b, err, 0, nil); err != nil {
		return nil, err
	}
	for {
		names, err := q.findOurs(ctx, n.GUID)
		if err == nil {
			return names, nil
		}
		if !zkop.Retryable(ctx, err) {
			return nil, err
		}
		if err := q.retryWhenBack(ctx, b, err, 0, nil); err != nil {
			return nil, err
		}
	}
}

// findOurs lists the lock path's children that carry guid, in queue order.
// It syncs first: it looks for creates whose answer the client never saw,
// so the server it talks to now may not have applied them yet, and a
// sweep that missed one would leave it for the whole session.
func (q *Queue) findOurs(ctx context.Context, guid string) ([]string, error) {
	if err := q.c.Sync(ctx, q.path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	kids, err := q.c.Children(ctx, q.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ours []string
	for _, e := range Sort(kids) {
		if NamedFor(e.Name, guid) {
			ours = append(ours, e.Name)
		}
	}
	return ours, nil
}

// adopt starts watching name and takes it as our node. It reports false
// when the node is gone or belongs to another session than the client's
// current one; hold.WatchQueued checks the node's ephemeralOwner.
func (q *Queue) adopt(ctx context.Context, n *Node, name string) (bool, error) {
	path := q.path + "/" + name
	for {
		mon, _, stat, err := hold.WatchQueued(ctx, q.c, path)
		switch {
		case err == nil:
			n.set(name, path, stat.Czxid, mon)
			return true, nil
		case errors.Is(err, hold.ErrSessionExpired), errors.Is(err, hold.ErrNodeDeleted):
			return false, nil
		case zkop.Retryable(ctx, err):
			if err := q.retryWhenBack(ctx, &n.fails, err, 0, nil); err != nil {
				return false, err
			}
		default:
			return false, fmt.Errorf("watch %s: %w", name, err)
		}
	}
}
