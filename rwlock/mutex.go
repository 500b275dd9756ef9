package rwlock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
)

// Errors of the read-write lock alone; it returns the module's shared
// ones (zklocks.ErrLocked, ...) too.
var (
	// ErrUpgrade is Lock's answer while this Mutex holds the read lock
	// (or is acquiring it): the write lock would wait for our own reader
	// for ever. Release the read lock first.
	ErrUpgrade = errors.New("a read lock can not be upgraded to the write lock")
	// ErrDowngrade is RLock's answer while this Mutex holds the write lock
	// and another writer has queued behind it: that writer would take
	// the lock beside our reader the moment we released the write lock
	// (CURATOR-621), and waiting for it would wait for ourselves.
	ErrDowngrade = errors.New("another writer is waiting: the write lock can not be downgraded")
)

// WithData sets the data stored in the Mutex's nodes when they are
// created, for example who the contender is.
func WithData(data []byte) zklocks.Option {
	return lockopt.Data(optData, data)
}

const optData = "rwlock.WithData"

// Mutex is one contender for the read-write lock at one path: a writer
// and a reader, each with at most one node in the lock's queue. Use one
// Mutex per contender; its methods are safe for concurrent use.
//
// The write lock (Lock, TryLock, Unlock) is exclusive; the read lock
// (RLock, TryRLock, RUnlock) is shared with other readers. A Mutex that
// holds the write lock may take the read lock too and then release the
// write lock: a downgrade, with no moment in which another writer could
// get in. It succeeds only while no other writer waits behind ours, and
// fails at once with ErrDowngrade otherwise (see the package doc). The
// other way round is refused (ErrUpgrade): a writer that waited for our
// own reader would wait for ever.
type Mutex struct {
	base *lockbase.Base
	q    *lockq.Queue

	mu   sync.Mutex
	w, r side
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends nothing to ZooKeeper; the lock path and its parents
// are created by the first acquisition that finds them missing.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	var data []byte
	b, err := lockbase.Open("rwlock", s, path, opts, func(o *lockopt.Options) error {
		data, _ = lockopt.Take[[]byte](o, optData)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &Mutex{base: b, q: lockq.New(b.Client, path, lockq.Config{Data: data, ACL: b.ACL, Lost: zklocks.ErrLockLost})}
	m.w = side{m: m, slot: lockq.NewSlot(&m.mu, m.q)}
	m.r = side{m: m, slot: lockq.NewSlot(&m.mu, m.q), read: true}
	return m, nil
}

// begin starts an acquisition of side s with node n, if the Mutex's
// state allows it.
func (m *Mutex) begin(s *side, n *lockq.Node) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.w.slot.HeldLocked()
	switch {
	case !s.slot.IdleLocked():
		return zklocks.ErrAlreadyLocked
	case s == &m.w && !m.r.slot.IdleLocked():
		return ErrUpgrade
	case s == &m.r && m.w.slot.AcquiringLocked():
		// Our read node could land ahead of our write node, and the write
		// lock would then wait for our own reader.
		return zklocks.ErrAlreadyLocked
	case s == &m.r && m.w.slot.LostLocked() != nil:
		// A downgrade promises that no writer got in since our write; a
		// lost write hold can not keep that promise.
		return fmt.Errorf("%w: %w", ErrDowngrade, m.w.slot.LostLocked())
	}
	s.own = ""
	if s == &m.r && w != nil {
		s.own = path.Base(w.Path())
	}
	s.slot.BeginLocked(n)
	return nil
}

// Lock takes the write lock: it joins the queue and waits until no node
// is ahead of its own. It returns ctx's error when ctx ends first,
// zklocks.ErrLockLost when its node vanishes while it waits, zklocks.ErrAlreadyLocked
// when this Mutex holds the write lock or is acquiring it, and ErrUpgrade
// while it holds or acquires the read lock. Whenever it fails, its node
// is gone from the ensemble before it returns or, when the ensemble can
// not be reached, is deleted in the background as soon as it can be.
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.w.acquire(ctx, true)) }

// TryLock takes the write lock only if nobody is in the queue, without
// waiting; it fails with zklocks.ErrLocked otherwise.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.w.acquire(ctx, false))
}

// Unlock releases the write lock by deleting its node. It returns
// zklocks.ErrNotLocked when the write lock is not held, and zklocks.ErrLockLost when the
// hold had already been lost. When the ensemble can not be reached the
// delete goes on in the background, and Unlock returns nil.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.w.release(ctx)) }

// RLock takes the read lock: it joins the queue and waits until no
// writer is ahead of its node (readers ahead of it do not count). While
// this Mutex holds the write lock, RLock downgrades: it does not wait,
// and fails with ErrDowngrade when another writer is already waiting.
// Its other errors are Lock's, but for ErrUpgrade.
func (m *Mutex) RLock(ctx context.Context) error { return m.base.Fail("rlock", m.r.acquire(ctx, true)) }

// TryRLock takes the read lock only if no writer is in the queue, without
// waiting; it fails with zklocks.ErrLocked otherwise.
func (m *Mutex) TryRLock(ctx context.Context) error {
	return m.base.Fail("tryrlock", m.r.acquire(ctx, false))
}

// RUnlock releases the read lock, as Unlock does the write lock.
func (m *Mutex) RUnlock(ctx context.Context) error { return m.base.Fail("runlock", m.r.release(ctx)) }

// Writer returns the write side of m as a zklocks.Locker: Lock, TryLock
// and Unlock are m's, Token and Done those of the write hold.
func (m *Mutex) Writer() *Side { return &Side{m: m, s: &m.w} }

// Reader returns the read side of m as a zklocks.Locker: its Lock,
// TryLock and Unlock are m's RLock, TryRLock and RUnlock, Token and Done
// those of the read hold. The Locker contract's exclusion holds between a
// reader and a writer only: readers share the lock.
func (m *Mutex) Reader() *Side { return &Side{m: m, s: &m.r} }

// Stats returns the requests m has sent and the watch events it has
// received, both sides together.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }

// Side is the reader or the writer of a Mutex, as a zklocks.Locker.
type Side struct {
	m *Mutex
	s *side
}

var _ zklocks.Locker = (*Side)(nil)

// Lock is the Mutex's Lock for the writer, RLock for the reader.
func (v *Side) Lock(ctx context.Context) error {
	if v.s.read {
		return v.m.RLock(ctx)
	}
	return v.m.Lock(ctx)
}

// TryLock is the Mutex's TryLock for the writer, TryRLock for the reader.
func (v *Side) TryLock(ctx context.Context) error {
	if v.s.read {
		return v.m.TryRLock(ctx)
	}
	return v.m.TryLock(ctx)
}

// Unlock is the Mutex's Unlock for the writer, RUnlock for the reader.
func (v *Side) Unlock(ctx context.Context) error {
	if v.s.read {
		return v.m.RUnlock(ctx)
	}
	return v.m.Unlock(ctx)
}

// Token returns the fencing token of this side's current hold, the czxid
// of its node, or 0 when it holds nothing. Tokens grow in queue order, so
// a writer's token is larger than that of every hold before it; readers
// that share the lock have tokens in the order they queued.
func (v *Side) Token() int64 { return v.s.slot.Token() }

// Done returns a channel that is closed when this side's current hold
// ends (released, or lost: node deleted, session expired, or cut off so
// long that the servers may soon expire the session); a closed channel
// when it holds nothing. Like every Done of this module it comes late for a paused
// process: fence the resource with Token.
func (v *Side) Done() <-chan struct{} { return v.s.slot.Done() }

// Err returns why this side's last hold was lost, wrapped in zklocks.ErrLockLost;
// nil while it holds (and has not lost) the lock, after a plain release,
// and before its first hold.
func (v *Side) Err() error { return v.s.slot.Err() }

// Node returns the full path of this side's node while it holds or
// acquires the lock, "" otherwise.
func (v *Side) Node() string { return v.s.slot.Node() }

// Stats is the Mutex's Stats (both sides share one client).
func (v *Side) Stats() zklocks.Stats { return v.m.Stats() }
