package sequential

import (
	"context"
	"sync"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
)

// WithData sets the data stored in the Mutex's node when it is created,
// for example who the contender is. Contenders returns it.
func WithData(data []byte) zklocks.Option {
	return lockopt.Data(optData, data)
}

const optData = "sequential.WithData"

// Mutex is one contender for the lock at one path, with its own node in
// the lock's queue. Use one Mutex per contender; its methods are safe for
// concurrent use, but it holds the lock at most once at a time.
type Mutex struct {
	base *lockbase.Base
	q    *lockq.Queue

	mu   sync.Mutex
	slot *lockq.Slot // idle, acquiring or held; guarded by mu
}

var _ zklocks.Locker = (*Mutex)(nil)

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends nothing to ZooKeeper; the lock path and its parents
// are created by the first Lock that finds them missing. Besides the
// options every variant takes (zklocks.WithACL, zklocks.WithLogger), it
// takes this package's WithData.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	var data []byte
	b, err := lockbase.Open("sequential", s, path, opts, func(o *lockopt.Options) error {
		data, _ = lockopt.Take[[]byte](o, optData)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &Mutex{base: b, q: lockq.New(b.Client, path, lockq.Config{Data: data, ACL: b.ACL})}
	m.slot = lockq.NewSlot(&m.mu, m.q)
	return m, nil
}

// Lock joins the queue and waits until this Mutex is first in it. It
// returns ctx's error when ctx ends first, zklocks.ErrLockLost when its node
// vanishes while it waits (deleted, or its session expired), and
// zklocks.ErrAlreadyLocked when this Mutex holds the lock or is acquiring it.
// Whenever it fails, its node is gone from the ensemble before it returns
// or, when the ensemble can not be reached, is deleted in the background
// as soon as it can be (or goes with the session). It does not wait for
// the ensemble: Lock returns at most about a second after ctx ends.
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.acquire(ctx, true)) }

// TryLock takes the lock only if nobody is in the queue, without waiting.
// It fails with zklocks.ErrLocked otherwise. It first syncs its server with the
// leader, so it sees every release that completed before it was called;
// when the queue is occupied it costs a sync and one read, and writes
// nothing.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.acquire(ctx, false))
}

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	return m.slot.Take(ctx, m.base.Log, func(n *lockq.Node) error { return m.lock(ctx, n, wait) })
}

// Unlock releases the lock by deleting this Mutex's node, which wakes the
// next contender. It returns zklocks.ErrNotLocked when the lock is not held, and
// zklocks.ErrLockLost (wrapping the reason) when the hold had already been lost;
// the node, if it still exists, is deleted in either case. When the
// ensemble can not be reached (or ctx ends) the delete goes on in the
// background until it succeeds or the session ends, and Unlock returns nil.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error { return m.slot.Unlock(ctx) }

// Token returns the fencing token of the current hold, the czxid of this
// Mutex's node, or 0 when the lock is not held. It keeps returning the
// token of a hold that has been lost until Unlock; a resource that
// compares tokens rejects it once a newer holder has used its own.
func (m *Mutex) Token() int64 { return m.slot.Token() }

// Done returns a channel that is closed when the current hold ends:
// released by Unlock, or lost because the node was deleted, the session
// expired, or the client has been cut off from the leader so long that
// the leader may soon expire its session (nine tenths of a session
// timeout after the latest moment the client can prove that the leader
// refreshed it; see zklocks.Session.Done). When the lock is not
// held it returns a closed channel. A closed Done comes late; it never
// protects a holder that is paused: use Token to fence the resource.
func (m *Mutex) Done() <-chan struct{} { return m.slot.Done() }

// Err returns why the last hold was lost, wrapped in zklocks.ErrLockLost; nil
// while the lock is held (and not lost), after a plain Unlock, and before
// the first hold.
func (m *Mutex) Err() error { return m.slot.Err() }

// Node returns the full path of this Mutex's node while it holds the lock,
// or while it acquires it once the node is created; "" otherwise.
func (m *Mutex) Node() string { return m.slot.Node() }

// Stats returns the requests this Mutex has sent and the watch events it
// has received.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
