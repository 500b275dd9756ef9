package semaphore

import (
	"context"
	"fmt"
	"sync"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
)

// Semaphore is one contender for one of the N permits of the semaphore at
// one path. Use one Semaphore per contender; its methods are safe for
// concurrent use, and it holds at most one permit at a time. Every
// contender of one path must be made with the same N: the bound is a
// protocol between them, which the servers do not check.
type Semaphore struct {
	base    *lockbase.Base
	q       *lockq.Queue
	permits int

	mu   sync.Mutex
	slot *lockq.Slot // idle, acquiring or held; guarded by mu
}

var _ zklocks.Locker = (*Semaphore)(nil)

// New returns a Semaphore with permits permits at path on session s. It
// fails with zklocks.ErrBadOption when permits is less than 1, and with
// New's errors of every variant otherwise (zklocks.ErrNilSession,
// zklocks.ErrBadPath); it sends nothing to ZooKeeper. It takes the
// options every variant takes (zklocks.WithACL, zklocks.WithLogger).
func New(s *zklocks.Session, path string, permits int, opts ...zklocks.Option) (*Semaphore, error) {
	b, err := lockbase.Open("semaphore", s, path, opts, func(*lockopt.Options) error {
		if permits < 1 {
			return fmt.Errorf("%w: %d permits; want at least 1", zklocks.ErrBadOption, permits)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &Semaphore{base: b, permits: permits, q: lockq.New(b.Client, path, lockq.Config{ACL: b.ACL})}
	m.slot = lockq.NewSlot(&m.mu, m.q)
	return m, nil
}

// Permits returns N, the number of holders the semaphore admits at once.
func (s *Semaphore) Permits() int { return s.permits }

// Lock joins the queue and waits until fewer than N contenders are ahead
// of it: it then holds one of the N permits. It returns ctx's error when
// ctx ends first, zklocks.ErrLockLost when its node vanishes while it
// waits, and zklocks.ErrAlreadyLocked when this Semaphore holds a permit
// or is acquiring one. Whenever it fails, its node is gone, or deleted in
// the background as soon as the ensemble can be reached.
func (s *Semaphore) Lock(ctx context.Context) error { return s.base.Fail("lock", s.acquire(ctx, true)) }

// TryLock takes a permit only if one is free now, and fails with
// zklocks.ErrLocked otherwise. It joins the queue to look (a create, and
// a delete when every permit is held).
func (s *Semaphore) TryLock(ctx context.Context) error {
	return s.base.Fail("trylock", s.acquire(ctx, false))
}

func (s *Semaphore) acquire(ctx context.Context, wait bool) error {
	return s.slot.Take(ctx, s.base.Log, func(n *lockq.Node) error { return s.lock(ctx, n, wait) })
}

// Unlock gives the permit back by deleting this Semaphore's node, which
// wakes the first waiter, if any. It returns zklocks.ErrNotLocked when no
// permit is held, and zklocks.ErrLockLost when the hold had been lost.
func (s *Semaphore) Unlock(ctx context.Context) error {
	return s.base.Fail("unlock", s.slot.Unlock(ctx))
}

// Token returns the fencing token of the current hold, the czxid of this
// Semaphore's node, or 0 when no permit is held. With N holders at once,
// tokens are not a fence against each other: a resource that keeps only
// the newest token would refuse the other N-1 holders. What a token still
// proves is the order of admissions (docs/09-semaphore.md, "Fencing with
// N holders").
func (s *Semaphore) Token() int64 { return s.slot.Token() }

// Done returns a channel that is closed when the current hold ends, by
// Unlock or by a loss; a closed channel when no permit is held.
func (s *Semaphore) Done() <-chan struct{} { return s.slot.Done() }

// Revoked returns a channel that is closed when a client has asked the
// current hold to give the lock up (sequential.Revoke, zklocks revoke,
// Curator's Revoker). Asking ends nothing: the holder decides when to
// Unlock, and Done closes only when the hold ends. nil, a channel that
// never closes, when the lock is not held.
func (s *Semaphore) Revoked() <-chan struct{} { return s.slot.Revoked() }

// Err returns why the last hold was lost, wrapped in zklocks.ErrLockLost;
// nil while it lasts, after a plain Unlock, and before the first hold.
func (s *Semaphore) Err() error { return s.slot.Err() }

// Node returns the full path of this Semaphore's node while it holds a
// permit or acquires one once the node is made; "" otherwise.
func (s *Semaphore) Node() string { return s.slot.Node() }

// Stats returns the requests this Semaphore has sent and the watch events
// it has received.
func (s *Semaphore) Stats() zklocks.Stats { return s.base.Stats() }
