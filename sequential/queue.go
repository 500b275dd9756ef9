package sequential

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// Contenders: the queue as an inspection tool sees it. How the queue's
// nodes are named and ordered is internal/lockq's (names.go).

// Contender is one node in a lock's queue, as Contenders reports it.
type Contender struct {
	// Node is the node's full path.
	Node string
	// Seq is the sequence number ZooKeeper gave the node (negative after
	// the parent's counter wrapped past 2^31-1).
	Seq int64
	// Data is what the contender stored in its node (see WithData).
	Data []byte
	// Stat is the node's stat: Czxid is the fencing token its hold has or
	// will have, EphemeralOwner the session that owns it.
	Stat zk.Stat
}

// Contenders returns the queue of the lock at path in lock order: the
// first one holds the lock, the others wait in turn. Children of the lock
// path that are not contenders (no sequence suffix) are left out. A
// missing lock path is an empty queue. Nodes that disappear while they are
// read are left out too, so the answer is a snapshot that may already be
// stale when it returns; it is meant for tools that inspect a lock, not
// for deciding who holds it.
func Contenders(ctx context.Context, s *zklocks.Session, path string) ([]Contender, error) {
	if s == nil {
		return nil, lockerr.Wrap("sequential", "contenders", path, zklocks.ErrNilSession)
	}
	if err := zkpath.Validate(path); err != nil {
		return nil, lockerr.Wrap("sequential", "contenders", path, fmt.Errorf("%w: %v", zklocks.ErrBadPath, err))
	}
	cs, err := contenders(ctx, zkop.New(s.Conn(), liveness.SessionClock(s)), path)
	return cs, lockerr.Wrap("sequential", "contenders", path, err)
}

// Contenders is the package function Contenders for this Mutex's lock
// path, counted in its Stats.
func (m *Mutex) Contenders(ctx context.Context) ([]Contender, error) {
	cs, err := contenders(ctx, m.q.Client(), m.base.Path)
	return cs, m.base.Fail("contenders", err)
}

// maxParallelReads bounds the reads Contenders keeps in flight at once.
const maxParallelReads = 16

func contenders(ctx context.Context, c *zkop.Client, path string) ([]Contender, error) {
	kids, err := c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	q := lockq.Sort(kids)
	out := make([]*Contender, len(q))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelReads)
	for i, e := range q {
		g.Go(func() error {
			node := path + "/" + e.Name
			data, stat, err := c.Get(gctx, node)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil // left the queue since the listing
			case err != nil:
				return fmt.Errorf("read %s: %w", node, err)
			}
			out[i] = &Contender{Node: node, Seq: int64(e.Seq), Data: data, Stat: *stat}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res := make([]Contender, 0, len(out))
	for _, ct := range out {
		if ct != nil {
			res = append(res, *ct)
		}
	}
	return res, nil
}
