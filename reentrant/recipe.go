package reentrant

import (
	"context"
	"fmt"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// reentrant: this whole function is new: the step before the queue. An
// owner that holds the lock counts one more level (reenter); the other
// owners of this Mutex take turns at its one node (awaitTurn), and the one
// whose turn it is runs the recipe below for a new node (take). So a Mutex
// has one node at a time, and the node names its owner.
func (m *Mutex) enter(ctx context.Context, wait bool) error {
	owner, ok := OwnerFrom(ctx)
	if !ok {
		return ErrNoOwner
	}
	start := m.base.Log.Now()
	for {
		// Re-entry first: the holder only counts one more level.
		if done, err := m.reenter(ctx, owner); done {
			return err
		}
		turn, err := m.awaitTurn(ctx, owner, wait, start)
		if err != nil {
			return err
		}
		if turn {
			return m.take(ctx, owner, wait, start)
		}
	}
}

// lock is the recipe of docs/02-sequential.md, the one ZooKeeper's recipes page
// gives: every contender queues as a sequential node, and each waits for
// the node just ahead of its own. The queue client below (internal/lockq)
// does the rest: retries while the connection is down, finding our node
// after a lost answer, watching our node for a loss, deleting twins.
//
// reentrant: it runs for an owner whose turn it is (enter, above).
func (m *Mutex) lock(ctx context.Context, owner string, n *lockq.Node, wait bool) error {
	// reentrant: our node's data is the holder record (host, pid, owner,
	//    and with InNode the count), so that any client can tell who holds
	//    the lock, and how deep.
	n.Data = m.record(owner, 1)

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
			return nil
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
		gone, err := m.q.AwaitGone(ctx, n, line)
		if err != nil {
			return err
		}
		if gone && line.Second() {
			return nil
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
