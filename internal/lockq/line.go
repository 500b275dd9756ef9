package lockq

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Line is one listing of the queue, seen from our node.
type Line struct {
	Head  string // the first node's full path: the holder
	Pred  string // the full path of the node just ahead of ours; "" when we are first
	Ahead int    // how many nodes are ahead of ours

	dir   string  // the lock path
	ahead []Entry // the nodes ahead of ours, in queue order
}

// Only is the line as seen by a contender that waits only for the nodes
// blocks picks (a reader of a read-write lock: the writers): Head is the
// first of them, Pred the last one ahead of ours, Ahead their number.
// Nodes ahead of ours that blocks does not pick are left out; a nil
// blocks picks every node.
func (l Line) Only(blocks func(name string) bool) Line {
	if blocks == nil {
		return l
	}
	out := Line{dir: l.dir}
	for _, e := range l.ahead {
		if blocks(e.Name) {
			out.ahead = append(out.ahead, e)
		}
	}
	out.Ahead = len(out.ahead)
	if out.Ahead > 0 {
		out.Head, out.Pred = l.dir+"/"+out.ahead[0].Name, l.dir+"/"+out.ahead[out.Ahead-1].Name
	}
	return out
}

// First reports whether our node is first in the queue: the lock is ours.
func (l Line) First() bool { return l.Ahead == 0 }

// Second reports whether exactly one node is ahead of ours: once it is
// gone we are first, without listing again, since nodes created later
// get higher sequence numbers.
func (l Line) Second() bool { return l.Ahead == 1 }

// Line lists the queue and finds our node in it, retrying while the
// connection is down (until the hold is lost or ctx ends). A missing node
// means the hold is lost before it began.
//
// When a create of this acquisition had an unknown outcome, a twin of our
// node (same GUID, another sequence number) can exist: a create that was
// applied although the client never heard of it. A twin would block the
// queue until our session ends, since nobody waits on it to release it;
// Line deletes it.
func (q *Queue) Line(ctx context.Context, n *Node) (Line, error) {
	var b backoff
	for {
		l, err := q.line(ctx, n)
		if err == nil || !zkop.Retryable(ctx, err) {
			return l, err
		}
		if err := q.retryWhenBack(ctx, &b, err, 0, n.mon); err != nil {
			return Line{}, err
		}
	}
}

func (q *Queue) line(ctx context.Context, n *Node) (Line, error) {
	kids, err := n.takeListing(ctx, q)
	if errors.Is(err, zk.ErrNoNode) {
		return Line{}, q.lost(q.goneReason(n))
	}
	if err != nil {
		return Line{}, fmt.Errorf("list: %w", err)
	}
	var ahead []Entry
	found := false
	for _, e := range Sort(kids) {
		switch {
		case e.Name == n.name:
			found = true
		case n.unsure && NamedFor(e.Name, n.GUID):
			// By name, not version: a node named with our GUID can only be
			// one this acquisition created.
			if err := q.c.Delete(ctx, q.path+"/"+e.Name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return Line{}, fmt.Errorf("delete twin %s: %w", e.Name, err)
			}
		case !found:
			ahead = append(ahead, e)
		}
		if found && !n.unsure {
			break // the rest are behind us, and no twin can be among them
		}
	}
	if !found {
		return Line{}, q.lost(q.goneReason(n))
	}
	l := Line{Ahead: len(ahead), dir: q.path, ahead: ahead}
	if len(ahead) > 0 {
		l.Head, l.Pred = q.path+"/"+ahead[0].Name, q.path+"/"+ahead[len(ahead)-1].Name
	}
	return l, nil
}

// goneReason is why our node is missing from a listing: the end of its
// session when the connection has another session now (the listing ran
// on the next one, before our monitor heard of the expiry), else what
// the monitor saw, else a deletion.
func (q *Queue) goneReason(n *Node) error {
	if q.sessionGone(n) {
		return hold.ErrSessionExpired
	}
	if err := n.mon.Err(); err != nil {
		return err
	}
	return hold.ErrNodeDeleted
}

// sessionGone reports whether the connection has another session than
// the one that made our node (its session ended, whether or not our
// monitor has heard of it yet).
func (q *Queue) sessionGone(n *Node) bool { return q.c.Conn.SessionID() != n.mon.Session() }

// takeListing returns the listing Join sent ahead, once, or lists now.
func (n *Node) takeListing(ctx context.Context, q *Queue) ([]string, error) {
	l := n.listing
	n.listing = nil
	if l == nil {
		return q.c.Children(ctx, q.path)
	}
	return l.Wait(ctx)
}
