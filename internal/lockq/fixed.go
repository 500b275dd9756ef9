package lockq

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// Fixed is the naive lock's primitive: the lock is one EPHEMERAL node at
// the lock path itself, whoever holds it. It is the queue's counterpart
// for a lock without a queue, and a Slot drives it the same way.
//
// The path is the same for every holder, so it can not say whose node is
// there; the node's data can. Every create of one acquisition writes the
// same stamp, the Node's GUID, and a node is ours only when it carries
// our stamp and belongs to our session. That decides three things the
// queue decides by name: whether a create whose answer was lost was
// applied (Take), whether the node we read back is the one we made
// (claim), and whether a delete still removes our node and not the next
// holder's (Release, deleteIfOursLater).
type Fixed struct {
	q *Queue // the client, the path, the config, and the retry pacing
}

// NewFixed returns the fixed-path primitive of the lock at path.
func NewFixed(c *zkop.Client, path string, cfg Config) *Fixed {
	return &Fixed{q: New(c, path, cfg)}
}

func (f *Fixed) client() *zkop.Client { return f.q.c }
func (f *Fixed) config() Config       { return f.q.cfg }

// stamp is the data of every create of n's acquisition.
func (n *Node) stamp() []byte { return []byte(n.GUID) }

// Take creates the lock node, stamped, and claims it (step 1 of the naive
// recipe). It reports false, with no error, when another session's node
// is there: the lock is taken.
//
// After a create whose outcome is unknown (n.unsure), a node that exists
// may be that very create, applied late or missed by the look after it:
// then a NodeExists looks at the node first, or the caller would wait for
// its own node to go. The parents are made once; a create that finds the
// session expired is tried again on the next session (maxRetries in a
// row); one whose connection went while it was in flight looks for its
// node once the client is back (findOwn).
func (f *Fixed) Take(ctx context.Context, n *Node) (bool, error) {
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		sid, err := f.create(ctx, n)
		if errors.Is(err, zk.ErrNodeExists) && n.unsure {
			if ok, ferr := f.findOwn(ctx, n, err); ok || ferr != nil {
				return ok, ferr
			}
		}
		switch {
		case err == nil:
			return f.claim(ctx, n, sid)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return false, err
		case errors.Is(err, zk.ErrNodeExists):
			return false, nil
		case errors.Is(err, zk.ErrNoNode) && n.parents < 1:
			n.parents++
			// Persistent parents: the lock node is the path itself, so
			// there is no container of ours to make.
			if err := f.q.c.EnsureParents(ctx, f.q.path, zkpath.Ancestors(f.q.path), false, f.q.cfg.ACL); err != nil {
				return false, step("create the parents", ctx, err)
			}
		case errors.Is(err, zk.ErrSessionExpired):
			// The node, if the create made it, went with that session.
			if err := f.q.pause(ctx, &n.fails, err, maxRetries, nil); err != nil {
				return false, step("create", ctx, err)
			}
		case zkop.Transient(err):
			// Applied with its answer lost (ErrConnectionClosed, or the
			// raw network error when the connection broke as it was
			// written), or never sent (ErrNoServer): the look tells.
			n.unsure = true
			if ok, ferr := f.findOwn(ctx, n, err); ok || ferr != nil {
				return ok, ferr
			}
		default:
			return false, step("create", ctx, err)
		}
	}
}

// create sends the stamped create and waits for its answer or for ctx;
// it returns the session that answered, which owns the node. The request
// itself does not take ctx: it must report its real outcome. When ctx
// wins, that outcome is awaited in the background, and a node it made is
// deleted if it is still ours (deleteIfOursLater).
func (f *Fixed) create(ctx context.Context, n *Node) (int64, error) {
	c := f.q.c
	answer := make(chan error, 1)
	go func() {
		_, err := c.Create(context.WithoutCancel(ctx), f.q.path, n.stamp(), zk.FlagEphemeral, f.q.cfg.ACL)
		answer <- err
	}()
	select {
	case err := <-answer:
		return c.Conn.SessionID(), err
	case <-ctx.Done():
		stamp := n.stamp()
		go func() {
			if err := <-answer; err == nil || zkop.Transient(err) {
				f.deleteIfOursLater(stamp, 0)
			}
		}()
		return 0, ctx.Err()
	}
}

// findOwn looks, once the client is back, for the node of a create whose
// answer the connection took with it (err is the create's failure). The
// node is ours if it carries our stamp and belongs to the session the
// client has now: a node with our stamp from an expired session is about
// to vanish, and any other is another holder's. It waits for the client
// while ctx allows (an outage is no reason to give up), and gives up at
// once when the connection has been closed or a read is refused; Abandon
// then deletes our node, if there is one, in the background.
func (f *Fixed) findOwn(ctx context.Context, n *Node, err error) (bool, error) {
	c := f.q.c
	var b backoff
	for {
		// A pause first: right after a Close go-zookeeper still reports
		// its session for a moment, and a request sent without a session
		// can stop its event loop (zkop.Client.AwaitSession).
		if werr := f.q.retryWhenBack(ctx, &b, err, 0, nil); werr != nil {
			return false, lookFailed(ctx, werr)
		}
		var data []byte
		var stat *zk.Stat
		data, stat, err = c.GetSynced(ctx, f.q.path) // the create's answer was never seen
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return false, nil
		case err == nil && bytes.Equal(data, n.stamp()) && stat.EphemeralOwner == c.Conn.SessionID():
			return f.claim(ctx, n, stat.EphemeralOwner)
		case err == nil:
			return false, nil
		case !retryable(ctx, err):
			return false, lookFailed(ctx, err)
		}
	}
}

// lookFailed says why findOwn could not look.
func lookFailed(ctx context.Context, err error) error {
	return step("create: the connection went before the answer, and the node can not be looked for", ctx, err)
}

// claim starts watching the node just created and reads it back: the
// czxid is the fencing token; the ephemeralOwner and the stamp together
// prove the node is ours. The owner alone does not: another lock on the
// same connection may have made the node again after ours was deleted.
// The claim finishes even if ctx ends meanwhile, bounded by a session
// timeout: the node exists, and leaving it would only make clean-up work.
func (f *Fixed) claim(ctx context.Context, n *Node, sid int64) (bool, error) {
	c := f.q.c
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.SessionTimeout())
	defer cancel()
	mon, data, stat, err := hold.WatchQueued(cctx, c, f.q.path)
	switch {
	case err == nil && stat.EphemeralOwner == sid && bytes.Equal(data, n.stamp()):
		n.sid = sid
		n.set("", f.q.path, stat.Czxid, mon)
		return true, nil
	case err == nil && stat.EphemeralOwner == sid:
		mon.Release()
		return false, fmt.Errorf("%w: right after the create, the node was replaced by another lock of this session: %w", zklocks.ErrLockLost, hold.ErrNodeDeleted)
	case err == nil:
		// The connection moved to a new session after our create: our
		// node died with the old one, and this is another lock's.
		mon.Release()
		return false, fmt.Errorf("%w: session %#x ended right after the create: %w", zklocks.ErrLockLost, sid, hold.ErrSessionExpired)
	case errors.Is(err, hold.ErrSessionExpired) && c.Conn.SessionID() == sid:
		// Our session lives on, so another session's node at our path is
		// not ours: ours was deleted right after the create.
		return false, fmt.Errorf("%w: right after the create, the node was replaced: %w", zklocks.ErrLockLost, hold.ErrNodeDeleted)
	case errors.Is(err, hold.ErrNodeDeleted), errors.Is(err, hold.ErrSessionExpired):
		return false, fmt.Errorf("%w: right after the create: %w", zklocks.ErrLockLost, err)
	default:
		n.unsure = true // our node is there, unclaimed: Abandon deletes it
		return false, step("read back", ctx, err)
	}
}

// AwaitFree sets an exists watch on the lock node and waits until it
// fires (step 4 of the naive recipe): every waiter watches the same node,
// so every release wakes them all. It returns nil when it is time to try
// the create again: the watch fired, the node was already gone, or the
// connection went (the create, tried again, waits for it).
func (f *Fixed) AwaitFree(ctx context.Context, n *Node) error {
	c := f.q.c
	exists, _, ev, err := c.ExistsW(ctx, f.q.path)
	switch {
	case err != nil && retryable(ctx, err):
		return nil
	case err != nil:
		return step("watch", ctx, err)
	case !exists:
		// Released between our create and our exists. The exists left a
		// watch for the node's creation; it fires once, into a buffered
		// channel nobody reads.
		return nil
	}
	if n.log != nil {
		n.log.Wait(ctx, "", f.q.path, -1, c.Conn.SessionID())
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case e := <-ev:
		c.Notified()
		switch {
		case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrSessionExpired):
			return fmt.Errorf("%w: session expired while waiting: %w", zklocks.ErrLockLost, e.Err)
		case e.Type == zk.EventNotWatching:
			return fmt.Errorf("wait: %w", e.Err) // the connection was closed
		}
		return nil // deleted (or changed): try again
	}
}

// Abandon undoes a failed acquisition: a node we claimed (a hold that
// ended as it began, Slot.TakeIf) and one a create may have made without
// our claiming it are deleted in the background if they are still ours.
func (f *Fixed) Abandon(_ context.Context, n *Node) {
	if n.mon != nil {
		n.mon.Release()
	}
	switch czxid := n.Token(); {
	case czxid != 0:
		f.deleteIfOursLater(nil, czxid)
	case n.unsure:
		f.deleteIfOursLater(n.stamp(), 0)
	}
}

// Release ends a hold: it stops the watch on our node, then deletes the
// node only if a read shows it is still ours (Release's guard). It returns
// the loss, wrapping zklocks.ErrLockLost, when the hold had ended before or the
// node is no longer ours; else the delete's error, nil when it was done
// or is done later. Even a lost hold deletes: one "lost" to a long
// disconnection may come back with its session, and its node must not
// stay behind.
func (f *Fixed) Release(ctx context.Context, n *Node) error {
	n.mon.Release()
	reason := n.mon.Err() // ErrReleased, unless the hold had ended before
	err := f.deleteIfOurs(ctx, n)
	if !errors.Is(reason, hold.ErrReleased) {
		return f.q.cfg.holdLost(reason)
	}
	return err
}

// deleteIfOurs deletes the lock node if it is still n's: same session
// (ephemeralOwner) and same czxid, at the version read, never -1. The
// read is the guard against removing a lock another client took after
// ours was lost; the version is not one (the next holder's node starts at
// version 0 too), and the round trip between the read and the delete
// stays open (docs/01-naive.md, "The window in Unlock").
func (f *Fixed) deleteIfOurs(ctx context.Context, n *Node) error {
	c, path, sid := f.q.c, f.q.path, n.sid
	for range 3 { // a BadVersion (our node's data changed under us) reads again
		if c.Conn.SessionID() != sid {
			return fmt.Errorf("%w: session %#x ended: %w", zklocks.ErrLockLost, sid, hold.ErrSessionExpired)
		}
		_, stat, err := c.Get(ctx, path)
		if err == nil {
			if stat.EphemeralOwner != sid || stat.Czxid != n.czxid {
				return fmt.Errorf("%w: the node now belongs to session %#x: %w", zklocks.ErrLockLost, stat.EphemeralOwner, hold.ErrNodeDeleted)
			}
			// Never queued without our session: it would go out on the
			// next one, where version 0 matches the next holder's node.
			err = c.DeleteOnSession(ctx, path, stat.Version, sid)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrSessionExpired):
			return fmt.Errorf("%w: session %#x ended: %w", zklocks.ErrLockLost, sid, hold.ErrSessionExpired)
		case errors.Is(err, zk.ErrBadVersion):
			continue
		case errors.Is(err, zk.ErrNoNode):
			return fmt.Errorf("%w: the node was deleted: %w", zklocks.ErrLockLost, err)
		case zkop.Transient(err) || ctx.Err() != nil:
			f.deleteIfOursLater(n.stamp(), n.czxid)
			return nil
		default:
			return step("delete", ctx, err)
		}
	}
	f.deleteIfOursLater(n.stamp(), n.czxid) // its version keeps changing: read and delete in the background
	return nil
}

// deleteIfOursLater deletes the lock node in the background (zkop.Client.Later:
// while the connection keeps this session, until it is closed) if it
// belongs to the session the connection has now and is that very node:
// the one with czxid when czxid is not 0 (its data may have been written
// since), else the one carrying stamp. A node that is gone or not ours
// ends it. Each delete is checked against that session right before it is
// sent (zkop.Client.DeleteOnSession).
func (f *Fixed) deleteIfOursLater(stamp []byte, czxid int64) {
	c, path := f.q.c, f.q.path
	sid := c.Conn.SessionID()
	c.Later(func(ctx context.Context) (bool, error) {
		data, stat, err := c.GetSynced(ctx, path) // the node may be from a create whose answer was lost
		if err == nil {
			if (czxid == 0 && !bytes.Equal(data, stamp)) || (czxid != 0 && stat.Czxid != czxid) || stat.EphemeralOwner != sid {
				return true, nil
			}
			err = c.DeleteOnSession(ctx, path, stat.Version, sid)
		}
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return true, nil
		case errors.Is(err, zk.ErrBadVersion):
			return false, nil // its data changed: read it again
		}
		return false, err
	})
}

// step names the failed step; a ctx error is returned as it is.
func step(name string, ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
