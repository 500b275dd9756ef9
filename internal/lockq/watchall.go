package lockq

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// The whole queue's watch, for a variant where a waiter can be let in by
// the release of any node ahead of it, not only its predecessor's (the
// semaphore's first waiter), and the write with which a node that was let
// in tells the waiter behind it (Mark).

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
		case zkop.Retryable(ctx, err):
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

// Mark writes data into our node, by name, at any version (the name is
// ours alone): the write fires the data watch the waiter behind us keeps
// on our node (the semaphore marks a node that was let in). A write that
// cannot go now is done later: the waiter behind must learn it while our
// node lives.
func (q *Queue) Mark(ctx context.Context, n *Node, data []byte) {
	path := n.Path()
	_, err := q.c.Set(ctx, path, data, -1)
	if err == nil || !(zkop.Retryable(ctx, err) || ctx.Err() != nil) {
		return // done, or refused (no node: the waiter behind is woken by the delete)
	}
	q.c.Later(func(ctx context.Context) (bool, error) {
		_, err := q.c.Set(ctx, path, data, -1)
		if errors.Is(err, zk.ErrNoNode) {
			return true, nil
		}
		return err == nil, err
	})
}
