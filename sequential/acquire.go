package sequential

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// The acquisition: joining the queue (create, with recovery from a lost
// create answer by GUID), waiting for the predecessor, and the clean-up of
// Unlock and of a failed Lock. The queue's order is in queue.go.

// Retry pacing. While the client is disconnected go-zookeeper keeps new
// requests queued, failing them only when a connection goes while they are
// in flight (ErrConnectionClosed) or when a whole round of dials has
// failed (ErrNoServer, about once a second), and at once when the
// connection has been closed for good. Failures in a row therefore mean
// an outage or a closed connection.
const (
	retryFirst  = 20 * time.Millisecond
	retryMax    = 500 * time.Millisecond
	maxRetries  = 6 // in a row, while joining and cleaning up (about 1.1 s)
	maxParents  = 3 // creates that find the lock path missing
	createFlags = zk.FlagEphemeral | zk.FlagSequence
)

// backoff counts failures in a row and sleeps a little longer after each.
type backoff struct{ n int }

// pause sleeps after the failure err; it returns err itself once limit
// failures (0: no limit) have been seen, and ctx's error if ctx ends.
// lost, when not nil, ends the sleep with ErrLockLost when it closes.
func (b *backoff) pause(ctx context.Context, err error, limit int, lost *hold.Monitor) error {
	b.n++
	if limit > 0 && b.n > limit {
		return err
	}
	t := time.NewTimer(min(retryFirst<<min(b.n-1, 8), retryMax))
	defer t.Stop()
	var done <-chan struct{}
	if lost != nil {
		done = lost.Done()
	}
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return lostError(lost.Err())
	}
}

// retryWhenBack pauses after the failure err (see backoff.pause), then
// waits until the client has a session again, so that nothing is sent on
// a closed connection (zkop.AwaitSession): a connection closed under a
// Lock ends it with zkop.ErrClosed. Each zkop.DialRound without a session
// counts as one more failure in a row.
func (m *Mutex) retryWhenBack(ctx context.Context, b *backoff, err error, limit int, lost *hold.Monitor) error {
	for {
		if err := b.pause(ctx, err, limit, lost); err != nil {
			return err
		}
		werr := m.c.AwaitSession(ctx, zkop.DialRound)
		if !zkop.Transient(werr) {
			return werr // nil: back
		}
		err = werr
	}
}

// occupant returns the name of the first contender in the queue, "" when
// the queue is empty or the lock path does not exist.
func (m *Mutex) occupant(ctx context.Context) (string, error) {
	// Without the sync, a TryLock called right after another session's
	// Unlock returned could still see that session's node on a lagging
	// follower and fail although the lock is free.
	if err := m.c.Sync(ctx, m.path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", fmt.Errorf("sync: %w", err)
	}
	kids, err := m.c.Children(ctx, m.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("list: %w", err)
	}
	if q := sortQueue(kids); len(q) > 0 {
		return q[0].name, nil
	}
	return "", nil
}

// create joins the queue: it creates our EPHEMERAL_SEQUENTIAL node and
// starts watching it.
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
func (m *Mutex) create(ctx context.Context, a *attempt) error {
	prefix := m.path + "/" + protectedPrefix + a.guid + lockSep
	b := &a.fails
	parents := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var names []string
		node, err := m.c.Create(ctx, prefix, m.opts.data, createFlags, m.opts.acl)
		switch {
		case err == nil:
			names = []string{node[len(m.path)+1:]}
		case errors.Is(err, zk.ErrNoNode) && parents < maxParents:
			// The lock path is missing: make it (a container, which the
			// server removes once its last child is gone) and try again.
			parents++
			if err := m.c.EnsureParents(ctx, m.path, zkpath.Ancestors(m.path), true, m.opts.acl); err != nil {
				return fmt.Errorf("create the parents: %w", err)
			}
			continue
		case errors.Is(err, zk.ErrSessionExpired):
			if err := b.pause(ctx, err, maxRetries, nil); err != nil {
				return err
			}
			continue
		case zkop.Transient(err), ctx.Err() != nil:
			a.unsure = true
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := m.retryWhenBack(ctx, b, err, maxRetries, nil); err != nil {
				return err
			}
			for names, err = m.findOurs(ctx, a.guid); err != nil; names, err = m.findOurs(ctx, a.guid) {
				if !zkop.Transient(err) || ctx.Err() != nil {
					return err
				}
				if err := m.retryWhenBack(ctx, b, err, maxRetries, nil); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("create: %w", err)
		}
		for _, name := range names {
			ok, err := m.adopt(ctx, a, name, b)
			if err != nil {
				a.unsure = true // name may be ours: clean up by GUID
				return err
			}
			if ok {
				return nil
			}
		}
		// None of them is ours (none was made, or they are a dead
		// session's): create again, with the same GUID. Any node with it
		// that is not the one we adopt is a twin to sweep.
		a.unsure = a.unsure || len(names) > 0
	}
}

// findOurs lists the lock path's children that carry guid, in queue order.
// It syncs first: it looks for creates whose answer the client never saw,
// so the server it talks to now may not have applied them yet, and a
// clean-up (sweep) that missed one would leave it for the whole session.
func (m *Mutex) findOurs(ctx context.Context, guid string) ([]string, error) {
	if err := m.c.Sync(ctx, m.path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	kids, err := m.c.Children(ctx, m.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ours []string
	for _, e := range sortQueue(kids) {
		if guidOf(e.name) == guid {
			ours = append(ours, e.name)
		}
	}
	return ours, nil
}

// adopt starts watching name and takes it as our node. It reports false
// when the node is gone or belongs to another session than the client's
// current one; hold.Watch checks the node's ephemeralOwner.
func (m *Mutex) adopt(ctx context.Context, a *attempt, name string, b *backoff) (bool, error) {
	node := m.path + "/" + name
	for {
		mon, stat, err := hold.WatchQueued(ctx, m.c, node)
		switch {
		case err == nil:
			m.mu.Lock()
			a.name, a.node, a.mon, a.czxid = name, node, mon, stat.Czxid
			m.mu.Unlock()
			return true, nil
		case errors.Is(err, hold.ErrSessionExpired), errors.Is(err, hold.ErrNodeDeleted):
			return false, nil
		case zkop.Transient(err) && ctx.Err() == nil:
			if err := m.retryWhenBack(ctx, b, err, maxRetries, nil); err != nil {
				return false, err
			}
		default:
			return false, fmt.Errorf("watch %s: %w", name, err)
		}
	}
}

// await waits in the queue until our node is first in it, watching only
// its predecessor. It reports ErrLocked instead of waiting when wait is
// false.
//
// Handoff without a read: when the last listing showed us second, the
// predecessor was the only node ahead of us, and nodes created later get
// higher sequence numbers, so once it is deleted we are first. Only when
// more nodes were ahead (a predecessor that leaves may not have been the
// holder) do we list again.
func (m *Mutex) await(ctx context.Context, a *attempt, wait bool) error {
	var (
		q       []entry         // the queue at the last listing
		idx     int             // our place in q
		list    = true          // q is stale: list again
		watched string          // the predecessor our data watch is on
		ev      <-chan zk.Event // that watch, nil when none is set
		b       backoff
	)
	for {
		if list {
			var err error
			if q, idx, err = m.position(ctx, a); err != nil {
				if zkop.Transient(err) && ctx.Err() == nil {
					if err := m.retryWhenBack(ctx, &b, err, 0, a.mon); err != nil {
						return err
					}
					continue
				}
				return err
			}
			if idx == 0 {
				return nil
			}
			if !wait {
				return fmt.Errorf("%w: %s/%s is first in the queue", ErrLocked, m.path, q[0].name)
			}
			list = false
		}
		pred, second := q[idx-1].name, idx == 1
		if ev == nil || watched != pred {
			// A data watch, as Curator does: an exists watch on a node that
			// is already gone would stay behind as a creation watch.
			predPath := m.path + "/" + pred
			_, _, ch, err := m.c.GetW(ctx, predPath)
			switch {
			case errors.Is(err, zk.ErrNoNode) && second:
				return nil // gone since the listing: we are first
			case errors.Is(err, zk.ErrNoNode):
				list = true
				continue
			case zkop.Transient(err) && ctx.Err() == nil:
				if err := m.retryWhenBack(ctx, &b, err, 0, a.mon); err != nil {
					return err
				}
				continue
			case err != nil:
				return fmt.Errorf("watch %s: %w", pred, err)
			}
			if m.opts.log != nil && watched != pred {
				m.opts.log.Wait(ctx, a.node, predPath, idx, m.c.Conn.SessionID())
			}
			watched, ev = pred, ch
		}
		b = backoff{}

		var again time.Duration
		if h := m.opts.waitHook; h != nil {
			var err error
			again, err = h(ctx, WaitState{Head: m.path + "/" + q[0].name, Self: a.node})
			switch {
			case err != nil && ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				return fmt.Errorf("wait hook: %w", err)
			}
		}
		var wake <-chan time.Time
		var timer *time.Timer
		if again > 0 {
			timer = time.NewTimer(again)
			wake = timer.C
		}
		select {
		case e := <-ev:
			ev = nil
			m.c.Notified()
			switch {
			case e.Type == zk.EventNodeDeleted && second:
				stopTimer(timer)
				return nil
			case e.Type == zk.EventNodeDataChanged:
				// Still there, still our predecessor: watch it again.
			case e.Type == zk.EventNotWatching && errors.Is(e.Err, zk.ErrSessionExpired):
				stopTimer(timer)
				return lostError(hold.ErrSessionExpired)
			case e.Type == zk.EventNotWatching:
				stopTimer(timer)
				return fmt.Errorf("wait: %w", e.Err)
			default:
				list = true
			}
		case <-wake:
			// The hook asked to be called again. When we are second its
			// Head, our predecessor, is still there; otherwise the head
			// may have changed: list first.
			list = !second
		case <-a.mon.Done():
			stopTimer(timer)
			return lostError(a.mon.Err())
		case <-ctx.Done():
			stopTimer(timer)
			return ctx.Err()
		}
		stopTimer(timer)
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// position lists the queue and finds our node in it. A missing node means
// the hold is lost before it began: ErrLockLost.
//
// When a create of this acquisition had an unknown outcome, a twin of our
// node (same GUID, another sequence number) can exist: a create that was
// applied although the client never heard of it. A twin would block the
// queue until our session ends, since nobody waits on it to release it;
// position deletes it.
func (m *Mutex) position(ctx context.Context, a *attempt) ([]entry, int, error) {
	kids, err := m.c.Children(ctx, m.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, -1, lostError(hold.ErrNodeDeleted)
	}
	if err != nil {
		return nil, -1, fmt.Errorf("list: %w", err)
	}
	q := sortQueue(kids)
	idx := -1
	kept := q[:0]
	for _, e := range q {
		switch {
		case e.name == a.name:
			idx = len(kept)
		case a.unsure && guidOf(e.name) == a.guid:
			// By name, not version: a node named with our GUID can only be
			// one this acquisition created.
			if err := m.c.Delete(ctx, m.path+"/"+e.name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return nil, -1, fmt.Errorf("delete twin %s: %w", e.name, err)
			}
			continue
		}
		kept = append(kept, e)
	}
	if idx < 0 {
		reason := a.mon.Err()
		if reason == nil {
			reason = hold.ErrNodeDeleted
		}
		return nil, -1, lostError(reason)
	}
	return kept, idx, nil
}

// remove deletes our node, whatever its data version. When the ensemble
// can not be reached now (or ctx ends), the delete goes on in the
// background (zkop.DeleteEventually) until it succeeds or the session ends.
//
// Version -1 is safe here, and saves a round trip on the path of every
// handoff: the reentrant and timeout packages rewrite our node's data (the
// count, the lease), so a delete at the version seen at create would fail
// with BadVersion (a logged error transaction) and have to read the node
// and delete again. Our node's name carries this acquisition's random
// GUID, which no other contender uses, so it can name no one else's node,
// now or later (a sequence number alone could: the lock path is a
// container, and once the server has removed it and someone has made it
// again, its counter starts over). At worst our node is already gone,
// deleted by someone else or with an expired session, and the delete
// finds nothing. The naive lock must never delete with -1: every holder
// there uses the same fixed path, so a late blind delete removes the next
// holder's node. Its clean-up, and the background one here
// (zkop.DeleteEventually), read the node first and delete it only if it
// is an ephemeral node of this session.
func (m *Mutex) remove(ctx context.Context, a *attempt) error {
	err := m.c.Delete(ctx, a.node, -1)
	if err != nil && (zkop.Transient(err) || ctx.Err() != nil) {
		m.c.DeleteEventually(a.node, -1)
		return nil
	}
	return err
}

// cleanupBudget bounds how long a failed Lock goes on trying to clean up
// before it returns (the session timeout does when it is shorter): long
// enough for the few requests of a clean-up on a working connection, and
// for a connection that is back within it; what can not be done by then
// goes on in the background.
const cleanupBudget = time.Second

// abandon undoes a failed acquisition: it stops the watch on our node and
// deletes the node, and any twin of it. It uses a context of its own (the
// caller's is usually done: that is why Lock failed), bounded by
// cleanupBudget; when the connection has no session at all right now it
// does not wait even that long. Whatever it can not finish, it hands to
// the background, which retries until it is done, the session has
// changed (its nodes went with it), or the connection is closed
// (zkop.Client.Eventually). So Lock returns about when its ctx ends, and
// nothing of it outlives the session.
func (m *Mutex) abandon(ctx context.Context, a *attempt) {
	if a.mon != nil {
		a.mon.Release()
	}
	if m.c.Conn.State() != zk.StateHasSession {
		// The ensemble can not be reached now: waiting for it here would
		// only make Lock late. The background does it all when it can.
		m.c.Eventually(func(ctx context.Context) (bool, error) { return m.undo(ctx, a) })
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(m.opts.sessionTimeout, cleanupBudget))
	defer cancel()
	if a.node != "" {
		_ = m.remove(cctx, a) // goes on in the background if it must
	}
	if !a.unsure {
		return
	}
	// A create may have been applied without our learning the name: find
	// the nodes by GUID and delete them. The failures in a row seen while
	// joining count: after as many as the joining allows, it is left to
	// the background at once (which stops soon on a closed connection).
	b := &a.fails
	for {
		done, err := m.sweep(cctx, a.guid)
		switch {
		case done:
			return
		case cctx.Err() == nil && !zkop.Transient(err):
			return // refused (no auth, session expired: its nodes are gone), not "not now"
		case cctx.Err() != nil || b.pause(cctx, err, maxRetries, nil) != nil:
			guid := a.guid
			m.c.Eventually(func(ctx context.Context) (bool, error) { return m.sweep(ctx, guid) })
			return
		}
	}
}

// undo deletes the node of a failed acquisition and, when a create had
// an unknown outcome, every twin of it; it reports whether it got through.
func (m *Mutex) undo(ctx context.Context, a *attempt) (done bool, err error) {
	if a.node != "" {
		// By name, at any version: the name carries this acquisition's GUID.
		if err := m.c.Delete(ctx, a.node, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return false, err
		}
	}
	if !a.unsure {
		return true, nil
	}
	return m.sweep(ctx, a.guid)
}

// sweep deletes every child of the lock path that carries guid, and
// reports whether it got through. By name, at any version: a node named
// with an acquisition's GUID can only be one that acquisition created.
func (m *Mutex) sweep(ctx context.Context, guid string) (done bool, err error) {
	names, err := m.findOurs(ctx, guid)
	if err != nil {
		return false, err
	}
	for _, name := range names {
		if err := m.c.Delete(ctx, m.path+"/"+name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return false, err
		}
	}
	return true, nil
}
