package naive

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// lockNode is the naive lock's primitive: the lock is one EPHEMERAL node
// at the lock path itself, whoever holds it. It is the queue's
// counterpart (internal/lockq) for a lock without a queue, and a
// lockq.Slot drives it the same way.
//
// The path is the same for every holder, so it can not say whose node is
// there; the node's data can. Every create of one acquisition writes the
// same stamp, the Node's GUID, and a node is ours only when it carries
// our stamp and belongs to our session. That decides three things the
// queue decides by name: whether a create whose answer was lost was
// applied (Take), whether the node we read back is the one we made
// (claim), and whether a delete still removes our node and not the next
// holder's (Release, deleteIfOursLater).
type lockNode struct {
	c    *zkop.Client
	path string
	cfg  lockq.Config
	// sid is the session that made the node of the current hold, whose
	// delete checks it. A Mutex acquires one hold at a time (its Slot),
	// and the Slot's mutex orders the hold's Take before its Release.
	sid int64
}

// maxRetries bounds the creates in a row that find the session expired.
const maxRetries = 6

// stamp is the data of every create of n's acquisition.
func stamp(n *lockq.Node) []byte { return []byte(n.GUID) }

// Client returns the client the lock node's requests go through.
func (f *lockNode) Client() *zkop.Client { return f.c }

// Config returns what the lock told its lock node.
func (f *lockNode) Config() lockq.Config { return f.cfg }

// Take creates the lock node, stamped, and claims it (step 1 of the naive
// recipe). It reports false, with no error, when another session's node
// is there: the lock is taken.
//
// After a create whose outcome is unknown (n.Unsure), a node that exists
// may be that very create, applied late or missed by the look after it:
// then a NodeExists looks at the node first, or the caller would wait for
// its own node to go. The parents are made once a call; a create that
// finds the session expired is tried again on the next session
// (maxRetries in a row); one whose connection went while it was in flight
// looks for its node once the client is back (findOwn).
func (f *lockNode) Take(ctx context.Context, n *lockq.Node) (bool, error) {
	var expired zkop.Backoff // creates in a row that found the session expired
	parents := false
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		sid, err := f.create(ctx, n)
		if errors.Is(err, zk.ErrNodeExists) && n.Unsure() {
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
		case errors.Is(err, zk.ErrNoNode) && !parents:
			parents = true
			// Persistent parents: the lock node is the path itself, so
			// there is no container of ours to make.
			if err := f.c.EnsureParents(ctx, f.path, zkpath.Ancestors(f.path), false, f.cfg.ACL); err != nil {
				return false, step("create the parents", ctx, err)
			}
		case errors.Is(err, zk.ErrSessionExpired):
			// The node, if the create made it, went with that session.
			if err := zkop.Pause(ctx, &expired, err, maxRetries, nil); err != nil {
				return false, step("create", ctx, err)
			}
		case zkop.Transient(err):
			// Applied with its answer lost (ErrConnectionClosed, or the
			// raw network error when the connection broke as it was
			// written), or never sent (ErrNoServer): the look tells.
			n.MarkUnsure()
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
func (f *lockNode) create(ctx context.Context, n *lockq.Node) (int64, error) {
	c := f.c
	answer := make(chan error, 1)
	go func() {
		_, err := c.Create(context.WithoutCancel(ctx), f.path, stamp(n), zk.FlagEphemeral, f.cfg.ACL)
		answer <- err
	}()
	select {
	case err := <-answer:
		return c.Conn.SessionID(), err
	case <-ctx.Done():
		stamp := stamp(n)
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
func (f *lockNode) findOwn(ctx context.Context, n *lockq.Node, err error) (bool, error) {
	c := f.c
	var b zkop.Backoff
	for {
		// A pause first: right after a Close go-zookeeper still reports
		// its session for a moment, and a request sent without a session
		// can stop its event loop (zkop.Client.AwaitSession).
		if werr := f.c.RetryWhenBack(ctx, &b, err, 0, nil); werr != nil {
			return false, lookFailed(ctx, werr)
		}
		var data []byte
		var stat *zk.Stat
		data, stat, err = c.GetSynced(ctx, f.path) // the create's answer was never seen
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return false, nil
		case err == nil && bytes.Equal(data, stamp(n)) && stat.EphemeralOwner == c.Conn.SessionID():
			return f.claim(ctx, n, stat.EphemeralOwner)
		case err == nil:
			return false, nil
		case !zkop.Retryable(ctx, err):
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
func (f *lockNode) claim(ctx context.Context, n *lockq.Node, sid int64) (bool, error) {
	c := f.c
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.SessionTimeout())
	defer cancel()
	mon, data, stat, err := hold.WatchQueued(cctx, c, f.path)
	switch {
	case err == nil && stat.EphemeralOwner == sid && bytes.Equal(data, stamp(n)):
		f.sid = sid
		n.SetHeld(f.path, stat.Czxid, mon)
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
		n.MarkUnsure() // our node is there, unclaimed: Abandon deletes it
		return false, step("read back", ctx, err)
	}
}

// AwaitFree sets an exists watch on the lock node and waits until it
// fires (step 4 of the naive recipe): every waiter watches the same node,
// so every release wakes them all. It returns nil when it is time to try
// the create again: the watch fired, the node was already gone, or the
// connection went (the create, tried again, waits for it).
func (f *lockNode) AwaitFree(ctx context.Context, n *lockq.Node) error {
	c := f.c
	exists, _, ev, err := c.ExistsW(ctx, f.path)
	switch {
	case err != nil && zkop.Retryable(ctx, err):
		return nil
	case err != nil:
		return step("watch", ctx, err)
	case !exists:
		// Released between our create and our exists. The exists left a
		// watch for the node's creation; it fires once, into a buffered
		// channel nobody reads.
		return nil
	}
	if log := n.Log(); log != nil {
		log.Wait(ctx, "", f.path, -1, c.Conn.SessionID())
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
func (f *lockNode) Abandon(_ context.Context, n *lockq.Node) {
	if mon := n.Monitor(); mon != nil {
		mon.Release()
	}
	switch czxid := n.Token(); {
	case czxid != 0:
		f.deleteIfOursLater(nil, czxid)
	case n.Unsure():
		f.deleteIfOursLater(stamp(n), 0)
	}
}

// Release ends a hold: it stops the watch on our node, then deletes the
// node only if a read shows it is still ours (Release's guard). It returns
// the loss, wrapping zklocks.ErrLockLost, when the hold had ended before or the
// node is no longer ours; else the delete's error, nil when it was done
// or is done later. Even a lost hold deletes: one "lost" to a long
// disconnection may come back with its session, and its node must not
// stay behind.
func (f *lockNode) Release(ctx context.Context, n *lockq.Node) error {
	n.Monitor().Release()
	reason := n.Monitor().Err() // ErrReleased, unless the hold had ended before
	err := f.deleteIfOurs(ctx, n)
	if !errors.Is(reason, hold.ErrReleased) {
		return f.cfg.HoldLost(reason)
	}
	return err
}

// deleteIfOurs deletes the lock node if it is still n's: same session
// (ephemeralOwner) and same czxid, at the version read, never -1. The
// read is the guard against removing a lock another client took after
// ours was lost; the version is not one (the next holder's node starts at
// version 0 too), and the round trip between the read and the delete
// stays open (docs/01-naive.md, "The window in Unlock").
func (f *lockNode) deleteIfOurs(ctx context.Context, n *lockq.Node) error {
	c, path, sid := f.c, f.path, f.sid
	for range 3 { // a BadVersion (our node's data changed under us) reads again
		if c.Conn.SessionID() != sid {
			return fmt.Errorf("%w: session %#x ended: %w", zklocks.ErrLockLost, sid, hold.ErrSessionExpired)
		}
		_, stat, err := c.Get(ctx, path)
		if err == nil {
			if stat.EphemeralOwner != sid || stat.Czxid != n.Token() {
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
			f.deleteIfOursLater(stamp(n), n.Token())
			return nil
		default:
			return step("delete", ctx, err)
		}
	}
	f.deleteIfOursLater(stamp(n), n.Token()) // its version keeps changing: read and delete in the background
	return nil
}

// deleteIfOursLater deletes the lock node in the background (zkop.Client.Later:
// while the connection keeps this session, until it is closed) if it
// belongs to the session the connection has now and is that very node:
// the one with czxid when czxid is not 0 (its data may have been written
// since), else the one carrying stamp. A node that is gone or not ours
// ends it. Each delete is checked against that session right before it is
// sent (zkop.Client.DeleteOnSession).
func (f *lockNode) deleteIfOursLater(stamp []byte, czxid int64) {
	c, path := f.c, f.path
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
