package naive

import (
	"context"
	"sync"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockq"
)

// Mutex is one contender for the lock at one path: the lock is held while
// the path exists as an ephemeral node of this Mutex's session.
//
// Its methods are safe for concurrent use. A Mutex is not re-entrant: Lock
// while it holds (or is acquiring) the lock fails with
// zklocks.ErrAlreadyLocked. A hold that was lost stays this Mutex's until
// Unlock, which reports the loss; only then can it Lock again. Two
// Mutexes on the same path exclude each other even when they share a
// session.
//
// Unlike the queue-based locks it has no Node method: its node is the
// lock path, whose name the next holder's node shares, so it can not
// fence a write the way zklocks.SetIfHeld does (see zklocks.NodeHolder).
type Mutex struct {
	base *lockbase.Base
	f    *lockNode

	mu   sync.Mutex
	slot *lockq.Slot // idle, acquiring or held; guarded by mu
}

var _ zklocks.Locker = (*Mutex)(nil)

// New returns a Mutex for the lock at path on session s. It checks its
// input and sends nothing to ZooKeeper. It takes the options every
// variant takes (zklocks.WithACL, zklocks.WithLogger) and none of its own.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	b, err := lockbase.Open("naive", s, path, opts, nil)
	if err != nil {
		return nil, err
	}
	m := &Mutex{base: b, f: &lockNode{c: b.Client, path: path, cfg: lockq.Config{ACL: b.ACL}}}
	m.slot = lockq.NewSlot(&m.mu, m.f)
	return m, nil
}

// Lock blocks until the lock is held, ctx is done, or an error makes
// waiting pointless.
//
// It creates the lock path as an ephemeral node (and its missing parents
// as persistent nodes). While another session holds the lock, Lock sets an
// exists watch on the node and sleeps until the watch fires, then tries
// again; every waiter does the same on every release. A lost connection
// is retried for a while; any other error but "node exists" is returned.
//
// The node's data is a random id, one per call: its retried creates carry
// the same id. The path can not tell our node from another client's, the
// id can. When ctx ends first, Lock returns ctx.Err() and leaves nothing
// behind: a create whose answer arrives later is undone in the background,
// and only a node that carries our id is deleted. Once the create has
// succeeded, Lock finishes the acquisition even if ctx ends meanwhile.
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.acquire(ctx, true)) }

// TryLock is Lock without the wait: when another session holds the lock it
// returns an error wrapping zklocks.ErrLocked at once.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.acquire(ctx, false))
}

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	return m.slot.Take(ctx, m.base.Log, func(n *lockq.Node) error { return m.lock(ctx, n, wait) })
}

// Unlock releases the lock. It deletes the lock node only after a read
// shows it is still the node this Mutex created: same session
// (ephemeralOwner) and same czxid; it deletes at the version read, never
// with -1. That read is the guard against removing a lock another client
// took after ours was lost. The version is not (a new node starts at
// version 0 too), and the round trip between the read and the delete
// stays open: see docs/01-naive.md, "The window in Unlock".
//
// Unlock fails with zklocks.ErrNotLocked when the Mutex does not hold the
// lock, and with zklocks.ErrLockLost when the hold was lost before Unlock
// (Done was closed, or the node is gone or no longer ours); the Mutex is
// then free for the next Lock. When the delete can not be sent now (ctx
// ends, connection down) it is retried in the background until it
// succeeds or the session ends, and Unlock returns nil: the node can not
// outlive the session.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error { return m.slot.Unlock(ctx) }

// Token returns the fencing token of the current hold, the czxid of the
// lock node, or 0 when the lock is not held. Tokens of successive holds
// of one path grow strictly.
func (m *Mutex) Token() int64 { return m.slot.Token() }

// Done returns a channel that is closed when the current hold ends: by
// Unlock, or because it was lost (node deleted, session expired, or cut
// off from the ensemble so long that the servers may soon expire the
// session). When the lock is not held it returns a closed channel. Done
// closes late, never early: until it closes, a paused or partitioned
// process can still believe it holds a lock that the ensemble has already
// given away; use Token to fence the resource.
func (m *Mutex) Done() <-chan struct{} { return m.slot.Done() }

// Err returns why the last hold was lost, wrapped in zklocks.ErrLockLost;
// nil while the lock is held (and not lost), after a plain Unlock, and
// before the first hold.
func (m *Mutex) Err() error { return m.slot.Err() }

// Stats returns the requests this Mutex sent and the watch events it
// received. On a contended lock, Notifications grows by one for every
// release while this Mutex waits: the herd effect, seen from one client.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
