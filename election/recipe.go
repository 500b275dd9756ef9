package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// campaign is the recipe of ZooKeeper's recipes page for leader election,
// which is the sequential lock's: candidates queue as sequential nodes,
// the first leads, and each of the others watches only the one just
// ahead of it. A term is one node's time at the head of the queue; it
// ends with the node, on Resign, when the session ends, or when the node
// is deleted. The queue client (internal/lockq) does the rest, as for the
// mutex.
func (e *Election) campaign(ctx context.Context, n *lockq.Node, value []byte, wait bool) error {
	// 0. The candidate's value is its node's data: Leader and Observe
	//    read it from the head of the queue. The node is named like
	//    Curator's LeaderLatch nodes (_c_<guid>-latch-<seq>), because
	//    Curator orders candidates by what follows "latch-" in a name.
	n.Data, n.Sep = value, latchSep

	// 1. Join the queue: create an EPHEMERAL_SEQUENTIAL child of the
	//    election path. ZooKeeper appends the sequence number.
	if err := e.q.Join(ctx, n); err != nil {
		return err
	}
	for {
		// 2. List the candidates and sort them by sequence number.
		line, err := e.q.Line(ctx, n)
		if err != nil {
			return err
		}

		// 3. The smallest number leads: if it is ours, our term begins.
		if line.First() {
			return nil
		}
		if !wait {
			return fmt.Errorf("%w: %s leads", zklocks.ErrLocked, line.Head)
		}

		// 4. Watch only the candidate just ahead of ours, so that the end
		//    of a term wakes one candidate, not all of them.
		// 5. Wait until it is gone. If it was the only one ahead, we lead
		//    now; otherwise it may have given up without leading: list
		//    again (step 2).
		gone, err := e.q.AwaitGone(ctx, n, line)
		if err != nil {
			return err
		}
		if gone && line.Second() {
			return nil
		}
	}
}

// lookAtHead is one round of the recipe a follower of the election runs
// (Observe repeats it, election.go):
//
//  1. List the candidates, with no watch, and take the head of the queue.
//  2. Read the head's value with a data watch, and report it.
//  3. Return that watch. ZooKeeper's DataTree.deleteNode fires NodeDeleted,
//     and setData NodeDataChanged, on a node's data watches: the head's
//     node deleted, a new term may begin; its data rewritten by someone,
//     look again (Observe does not report the same term twice).
//
// Only the head is watched, so a candidate joining or giving up behind it
// wakes no observer. With no candidate, the watch is on the children of
// the path (on the path itself before anyone made it), for the first
// candidate. A closed channel means: look again now.
func (e *Election) lookAtHead(ctx context.Context, report func(Leader)) (<-chan zk.Event, error) {
	c := e.q.Client()
	kids, err := c.Children(ctx, e.base.Path) // no watch: joins behind the head wake nobody
	if errors.Is(err, zk.ErrNoNode) {         // no candidate has made the path yet
		ok, _, ev, err := c.ExistsW(ctx, e.base.Path)
		if err == nil && ok {
			return closed, nil // made since the listing: look again
		}
		return ev, err
	}
	if err != nil {
		return nil, err
	}
	q := lockq.Sort(kids)
	if len(q) == 0 {
		// Nobody campaigns: watch for the first candidate (and look
		// again, for one that came between the two listings; the child
		// watch set then stays and fires once, on the next change: one
		// stray event when the first candidate races the observer).
		kids, ev, err := c.ChildrenW(ctx, e.base.Path)
		if errors.Is(err, zk.ErrNoNode) || err == nil && len(lockq.Sort(kids)) > 0 {
			return closed, nil // the empty path was reaped, or someone came: look again
		}
		return ev, err
	}
	head := e.base.Path + "/" + q[0].Name
	data, stat, ev, err := c.GetW(ctx, head)
	if errors.Is(err, zk.ErrNoNode) {
		return closed, nil // gone since the listing: look again
	}
	if err != nil {
		return nil, err
	}
	report(Leader{Value: data, Node: head, Term: stat.Czxid})
	return ev, nil
}

// latchSep is the separator of a candidate's node name, Curator's
// LeaderLatch's, so that either library's candidates queue together.
const latchSep = "-latch-"
