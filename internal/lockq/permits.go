package lockq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
)

// What the semaphore adds to the queue: the first waiter's wait and the
// promotion's announcement. With N permits, the first N nodes of the
// queue hold; only the node just behind them, the first waiter, can be
// let in by a release, and by any holder's release, so it alone watches
// the whole queue. Every later waiter watches its predecessor, as in the
// mutex. When a waiter is let in, the waiter behind it has become the
// first waiter without any node of the queue going away: the one let in
// tells it, by writing its own node (Announce), which fires the data
// watch the waiter behind keeps on it.

// Promoted is the data a node that was let in writes to announce it.
var Promoted = []byte("held")

// ListNow is what a WhileWaiting hook returns to end the wait at once and
// have the queue listed again.
const ListNow time.Duration = -1

// SeesPromoted is the wait hook of a waiter behind another waiter: a
// predecessor whose data already says Promoted was let in after our last
// listing, so we may be the first waiter now.
func SeesPromoted(_ context.Context, w Wait) (time.Duration, error) {
	if bytes.Equal(w.PredData, Promoted) {
		return ListNow, nil
	}
	return 0, nil
}

// AwaitQueueChange is the first waiter's wait: it sets a child watch on
// the lock path and waits until the queue changes, our node is lost, or
// ctx ends. It returns at once when the listing that set the watch puts
// fewer than ahead nodes before ours (a holder left before the watch was
// set). Every create and delete of a node in the queue fires the watch:
// joins wake the first waiter too, one event each, never anyone else.
func (q *Queue) AwaitQueueChange(ctx context.Context, n *Node, ahead int) error {
	var b backoff
	for {
		kids, ev, err := q.c.ChildrenW(ctx, q.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return q.lost(q.goneReason(n))
		case retryable(ctx, err):
			if err := q.retryWhenBack(ctx, &b, err, 0, n.mon); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("watch the queue: %w", err)
		}
		k, found := before(kids, n.name)
		switch {
		case !found:
			return q.lost(q.goneReason(n))
		case k < ahead:
			return nil
		}
		if n.log != nil {
			n.log.Wait(ctx, n.path, q.path, ahead, q.c.Conn.SessionID())
		}
		select {
		case e := <-ev:
			q.c.Notified()
			if e.Type == zk.EventNotWatching {
				if errors.Is(e.Err, zk.ErrSessionExpired) {
					return q.lost(hold.ErrSessionExpired)
				}
				return fmt.Errorf("wait: %w", e.Err)
			}
			return nil
		case <-n.mon.Done():
			return q.lost(n.mon.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// before counts the contenders in kids ahead of the one named name, and
// reports whether that one is there at all.
func before(kids []string, name string) (int, bool) {
	for k, e := range Sort(kids) {
		if e.Name == name {
			return k, true
		}
	}
	return 0, false
}

// Announce writes Promoted into our node, to wake the waiter behind it
// (see the top of this file). By name, at any version: the name is ours
// alone. A write that can not go now is done later: the waiter behind
// must learn it while our node lives.
func (q *Queue) Announce(ctx context.Context, n *Node) {
	path := n.Path()
	_, err := q.c.Set(ctx, path, Promoted, -1)
	if err == nil || !(retryable(ctx, err) || ctx.Err() != nil) {
		return // done, or refused (no node: the waiter behind is woken by the delete)
	}
	q.c.Later(func(ctx context.Context) (bool, error) {
		_, err := q.c.Set(ctx, path, Promoted, -1)
		if errors.Is(err, zk.ErrNoNode) {
			return true, nil
		}
		return err == nil, err
	})
}
