package rwlock

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
// rwlock: it is the shared-lock form of that recipe. Readers and writers
// queue in one line, so both are served in the order they came and a
// stream of readers can not starve a writer. Only what a contender waits
// for differs: a writer waits for every node ahead of it, a reader only
// for the writers ahead of it (Side.blocks).
func (m *Mutex) lock(ctx context.Context, s *Side, n *lockq.Node, wait bool) error {
	// rwlock: the nodes that keep us waiting (nil for a writer: all).
	blocks := s.blocks()

	// 0. TryLock looks before it joins: a queue with anyone in it means
	//    waiting, and joining would only cost a create and a delete.
	if !wait {
		if head, err := m.q.FirstOf(ctx, blocks); err != nil || head != "" { // rwlock: anyone who blocks us
			return locked(head, err)
		}
	}

	// 1. Join the queue: create an EPHEMERAL_SEQUENTIAL child of the lock
	//    path, _c_<guid>-lock-<seq>. ZooKeeper appends the sequence number.
	n.Sep = s.sep() // rwlock: _c_<guid>-__READ__<seq> or _c_<guid>-__WRIT__<seq>
	if err := m.q.Join(ctx, n); err != nil {
		return err
	}
	for {
		// 2. List the children and sort them by sequence number.
		line, err := m.q.Line(ctx, n)
		if err != nil {
			return err
		}

		// rwlock: keep only the nodes that block us: a reader behind
		//    readers only is as good as first, and watches the closest
		//    writer ahead of it, never one behind it (kazoo #649).
		line = line.Only(blocks)

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
