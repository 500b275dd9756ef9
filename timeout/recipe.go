package timeout

import (
	"context"
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// lock is the recipe of docs/02-sequential.md, the one ZooKeeper's recipes page
// gives: every contender queues as a sequential node, and each waits for
// the node just ahead of its own. The queue client below (internal/lockq)
// does the rest: retries while the connection is down, finding our node
// after a lost answer, watching our node for a loss, deleting twins.
//
// timeout: two steps change, for the lease of docs/04-timeout.md (the
// acquire bound is ctx's: LockTimeout). The holder's lease starts with the hold,
// and its "held" record follows, and a waiter judges the head's lease
// while it waits, by ZooKeeper's clock, evicting a head whose lease has
// run out.
func (m *Mutex) lock(ctx context.Context, n *lockq.Node, wait bool, j *judge) error {
	// 0. TryLock looks before it joins: a queue with anyone in it means
	//    waiting, and joining would only cost a create and a delete.
	if !wait {
		if head, err := m.q.Head(ctx); err != nil || head != "" {
			return locked(head, err)
		}
	}

	// 1. Join the queue: create an EPHEMERAL_SEQUENTIAL child of the lock
	//    path, _c_<guid>-lock-<seq>. ZooKeeper appends the sequence number.
	if err := m.q.Join(ctx, n); err != nil {
		return err
	}
	for {
		// 2. List the children and sort them by sequence number.
		line, err := m.q.Line(ctx, n)
		if err != nil {
			return err
		}

		// 3. The smallest number holds the lock: if it is ours, we hold it.
		if line.First() {
			// timeout: and our lease runs, from a moment before our
			// create; the "held" record is written as Lock returns.
			return m.stamp(ctx, n, j)
		}
		if !wait {
			return locked(line.Head, nil)
		}

		// 4. Watch only the node just ahead of ours, so that a release
		//    wakes one waiter, not all of them (no herd).
		// 5. Wait until it is gone. If it was the only one ahead, we are
		//    first now: nodes created later have larger numbers, so there
		//    is nothing to list. Otherwise it may have left the queue
		//    without holding the lock: list again (step 2).
		// timeout: while waiting, judge the head's lease (the first
		//    waiter that speaks leases does), and evict the head (a
		//    versioned delete: one waiter wins) once it has run out.
		gone, err := m.q.AwaitGone(ctx, n, line, j.hook)
		if err != nil {
			return err
		}
		if gone && line.Second() {
			// timeout: as in step 3.
			return m.stamp(ctx, n, j)
		}
	}
}

// locked is TryLock's answer when someone else is in the queue.
func locked(head string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s is first in the queue", zklocks.ErrLocked, head)
}
