package lockq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Config is what a lock tells its Queue.
type Config struct {
	Data []byte   // our node's data
	ACL  []zk.ACL // of our node and of the lock path and parents it makes
	// NameLoss, when set, says in the variant's own words why a hold
	// ended: it returns the reason, wrapped in the variant's error or as
	// it is (the timeout lock calls a node deleted under a lease
	// "evicted"). The queue itself knows no variant's reasons.
	NameLoss func(reason error) error
}

// WhileWaiting is what a variant does while it waits (the timeout lock
// judges the head's lease): AwaitGone calls it each time it has set its
// watch and is about to wait. A positive again has it called again after
// that long (after a new listing unless we are second); ListNow ends the
// wait at once for a new listing; an error ends the acquisition.
type WhileWaiting func(ctx context.Context, w Wait) (again time.Duration, err error)

// ListNow is what a WhileWaiting hook returns to end the wait at once and
// have the queue listed again.
const ListNow time.Duration = -1

// Wait is the queue as a waiter sees it when it is about to wait.
type Wait struct {
	Head     string   // the head's full path, as of the last listing
	Self     string   // our node's full path
	Pred     string   // the node we watch, just ahead of ours
	PredData []byte   // its data, as the read that set the watch saw it
	PredStat *zk.Stat // its stat, as that read saw it
	Second   bool     // Pred is the head
}

// Queue is the queue of one lock path, as one contender uses it.
type Queue struct {
	c    *zkop.Client
	path string
	cfg  Config
}

// New returns the Queue of the lock at path, reached through c.
func New(c *zkop.Client, path string, cfg Config) *Queue {
	return &Queue{c: c, path: path, cfg: cfg}
}

// Client returns the client the Queue sends its requests with.
func (q *Queue) Client() *zkop.Client { return q.c }

// Node is our node in the queue: one acquisition and, if it succeeds, one
// hold. The acquiring goroutine writes it; Path and Token may be read from
// any goroutine.
type Node struct {
	GUID string
	// Data, when not nil, is this node's data instead of Config.Data:
	// set it before Join.
	Data []byte
	// Sep is the separator before the sequence number in our node's
	// name (LockSep when empty): set it before Join.
	Sep string
	mon *hold.Monitor
	log *oplog.Log // the acquisition's operation log, nil when off

	mu    sync.Mutex // guards name, path, czxid
	name  string     // under the lock path, once known
	path  string     // full path, once known
	czxid int64      // the fencing token

	// unsure is set when a create may have been applied without our
	// learning the node's name (connection lost or ctx done while it was
	// in flight): only then can a twin with our GUID exist.
	unsure bool
	// fails counts transient failures in a row while joining and
	// abandoning: many mean the connection is gone for good (closed).
	fails backoff
	// parents counts the creates that found the lock path missing.
	parents int
	// watched is the predecessor our data watch is on, ev that watch
	// (nil when none is set): a wait that ends without the predecessor
	// gone keeps it for the next.
	watched  string
	ev       <-chan zk.Event
	predData []byte   // the watched node's data
	predStat *zk.Stat // and its stat
	// listing is step 2's first listing, sent beside the watch on our
	// node right after the create (nil once taken).
	listing *zkop.Pending[[]string]
}

// NewNode returns a Node for one acquisition, with a GUID of its own;
// the wait is written to log (nil: off).
func NewNode(log *oplog.Log) *Node { return &Node{GUID: newGUID(), log: log} }

// Monitor returns the watch on our node (nil before Join has made it).
func (n *Node) Monitor() *hold.Monitor { return n.mon }

// Log returns the acquisition's operation log, nil when it is off.
func (n *Node) Log() *oplog.Log { return n.log }

// Unsure reports whether a create of this acquisition may have been
// applied without our learning of it (MarkUnsure).
func (n *Node) Unsure() bool { return n.unsure }

// MarkUnsure records that a create's outcome is unknown (its answer was
// lost, or ctx ended while it was in flight): the clean-up must then look
// for a node it never heard of.
func (n *Node) MarkUnsure() { n.unsure = true }

// SetHeld records the node at path, created at czxid and watched by mon,
// as our node: for a keeper other than the Queue, whose node has no name
// of its own in a queue.
func (n *Node) SetHeld(path string, czxid int64, mon *hold.Monitor) { n.set("", path, czxid, mon) }

// Path returns our node's full path, "" until Join has found it.
func (n *Node) Path() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.path
}

// Token returns our node's czxid, the fencing token of its hold.
func (n *Node) Token() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.czxid
}

func (n *Node) set(name, path string, czxid int64, mon *hold.Monitor) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.name, n.path, n.czxid, n.mon = name, path, czxid, mon
}

// newGUID returns the 128-bit random identifier of one acquisition, as 32
// hex digits.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b[:])
}

// Head returns the full path of the first contender in the queue, "" when
// the queue is empty or the lock path does not exist: TryLock's look
// before it joins.
func (q *Queue) Head(ctx context.Context) (string, error) { return q.FirstOf(ctx, nil) }

// FirstOf is Head for a contender that waits only for the nodes blocks
// picks (nil: every node): the first of those, or "".
func (q *Queue) FirstOf(ctx context.Context, blocks func(name string) bool) (string, error) {
	// Without the sync, a TryLock called right after another session's
	// Unlock returned could still see that session's node on a lagging
	// follower and fail although the lock is free.
	if err := q.c.Sync(ctx, q.path); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", fmt.Errorf("sync: %w", err)
	}
	kids, err := q.c.Children(ctx, q.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("list: %w", err)
	}
	for _, e := range Sort(kids) {
		if blocks == nil || blocks(e.Name) {
			return q.path + "/" + e.Name, nil
		}
	}
	return "", nil
}

// lost is a loss of our node for the given reason.
func (q *Queue) lost(reason error) error { return fmt.Errorf("%w: %w", zklocks.ErrLockLost, reason) }

// named is the reason a hold ended, as the lock names it (NameLoss).
func (c Config) named(reason error) error {
	if c.NameLoss != nil {
		return c.NameLoss(reason)
	}
	return reason
}

// HoldLost is the loss of a hold for reason: named (NameLoss), and
// wrapping zklocks.ErrLockLost unless it does already (a loss the lock
// found itself and told the monitor with Lose).
func (c Config) HoldLost(reason error) error {
	if reason = c.named(reason); errors.Is(reason, zklocks.ErrLockLost) {
		return reason
	}
	return fmt.Errorf("%w: %w", zklocks.ErrLockLost, reason)
}
