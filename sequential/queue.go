package sequential

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks/internal/lockerr"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
)

// The queue: how contenders' nodes are named, how their sequence numbers
// are read and ordered, and the Contenders view of it. The acquisition
// that joins and waits in it is in acquire.go.

// Node names. ZooKeeper appends the sequence number to what we ask for, so
// a contender's node is called protectedPrefix + guid + lockSep + sequence.
// Curator and go-zookeeper use the same form.
const (
	protectedPrefix = "_c_"
	lockSep         = "-lock-"
	seqWidth        = 10 // ZooKeeper prints the counter with %010d
)

// entry is one contender in the queue: a child of the lock path whose name
// ends in a sequence number.
type entry struct {
	name string
	seq  int32
}

// parseSeq returns the sequence number ZooKeeper appended to a child's
// name, whatever the prefix before it (ours and Curator's "-lock-",
// kazoo's "__lock__", go-zookeeper's "lock-"). A name without such a
// suffix is not a contender.
//
// ZooKeeper's counter is a signed 32-bit int printed with %010d, so after
// 2^31-1 creates under one parent it wraps to negative numbers, and the
// sign takes one of the ten places: -5 prints as "-000000005", while
// -1000000000 down to -2147483648 take eleven characters. In that last
// range a '-' before the ten digits is a minus sign only if the prefix
// does not end with it; every lock prefix in use ends with '-' or '_', so
// a '-' that follows one of those is the sign.
func parseSeq(name string) (int32, bool) {
	n := len(name)
	if n < seqWidth {
		return 0, false
	}
	tail := name[n-seqWidth:]
	neg := tail[0] == '-'
	if neg {
		tail = tail[1:] // "-" and nine digits
	}
	var v int64
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		if v == 0 {
			return 0, false // %010d never prints "-000000000"
		}
		return int32(-v), true
	}
	if n > seqWidth+1 && name[n-seqWidth-1] == '-' && (name[n-seqWidth-2] == '-' || name[n-seqWidth-2] == '_') {
		if v < 1e9 || v > -math.MinInt32 {
			return 0, false // would have been printed in ten characters, or out of range
		}
		return int32(-v), true
	}
	if v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// sortQueue keeps the children that are contenders and orders them as
// ZooKeeper created them: the first one holds the lock.
//
// The order is serial-number arithmetic on the 32-bit counter (RFC 1982,
// the fix proposed in kazoo #606), not a plain comparison: each sequence
// is taken as its signed 32-bit distance from one member of the queue.
// That order is exact as long as the oldest and the newest live contender
// are fewer than 2^31 creates apart, so it stays right when the counter
// wraps from 2147483647 to -2147483648, where a plain signed comparison
// (go-zookeeper's Lock) or a string comparison (Curator, kazoo) would put
// the newest nodes first. Ties, which ZooKeeper never produces under one
// parent, are broken by name so every client sees the same order.
func sortQueue(children []string) []entry {
	q := make([]entry, 0, len(children))
	for _, name := range children {
		if s, ok := parseSeq(name); ok {
			q = append(q, entry{name: name, seq: s})
		}
	}
	if len(q) < 2 {
		return q
	}
	ref := q[0].seq
	slices.SortFunc(q, func(a, b entry) int {
		// int32 subtraction wraps around in Go: this is the serial distance.
		if c := cmp.Compare(a.seq-ref, b.seq-ref); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return q
}

// guidOf returns the GUID in one of our node names, or "" for names of
// other forms.
func guidOf(name string) string {
	rest, ok := strings.CutPrefix(name, protectedPrefix)
	if !ok {
		return ""
	}
	guid, _, ok := strings.Cut(rest, lockSep)
	if !ok {
		return ""
	}
	return guid
}

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
func Contenders(ctx context.Context, conn *zk.Conn, path string) ([]Contender, error) {
	if conn == nil {
		return nil, lockerr.Wrap("sequential", "contenders", path, ErrNilConn)
	}
	if err := zkpath.Validate(path); err != nil {
		return nil, lockerr.Wrap("sequential", "contenders", path, fmt.Errorf("%w: %v", ErrBadPath, err))
	}
	cs, err := contenders(ctx, zkop.New(conn, DefaultSessionTimeout), path)
	return cs, lockerr.Wrap("sequential", "contenders", path, err)
}

// Contenders is the package function Contenders for this Mutex's lock
// path, counted in its Stats.
func (m *Mutex) Contenders(ctx context.Context) ([]Contender, error) {
	cs, err := contenders(ctx, m.c, m.path)
	return cs, m.fail("contenders", err)
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
	q := sortQueue(kids)
	out := make([]*Contender, len(q))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelReads)
	for i, e := range q {
		g.Go(func() error {
			node := path + "/" + e.name
			data, stat, err := c.Get(gctx, node)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil // left the queue since the listing
			case err != nil:
				return fmt.Errorf("read %s: %w", node, err)
			}
			out[i] = &Contender{Node: node, Seq: int64(e.seq), Data: data, Stat: *stat}
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
