package rwlock

import (
	"context"
	"errors"
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
// fails at once with ErrDowngrade otherwise (docs/07-rwlock.md). The
// other way round is refused (ErrUpgrade): a writer that waited for our
// own reader would wait for ever.
type Mutex struct {
	base *lockbase.Base
	q    *lockq.Queue

	mu   sync.Mutex // guards both sides' slots, so that each checks the other's
	w, r Side
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends nothing to ZooKeeper; the lock path and its parents
// are created by the first acquisition that finds them missing. Besides
// the options every variant takes (zklocks.WithACL, zklocks.WithLogger),
// it takes this package's WithData.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	var data []byte
	b, err := lockbase.Open("rwlock", s, path, opts, func(o *lockopt.Options) error {
		data, _ = lockopt.Take[[]byte](o, optData)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &Mutex{base: b, q: lockq.New(b.Client, path, lockq.Config{Data: data, ACL: b.ACL})}
	m.w = Side{m: m, slot: lockq.NewSlot(&m.mu, m.q)}
	m.r = Side{m: m, slot: lockq.NewSlot(&m.mu, m.q), read: true}
	return m, nil
}

// Lock takes the write lock: it joins the queue and waits until no node
// is ahead of its own. It returns ctx's error when ctx ends first,
// zklocks.ErrLockLost when its node vanishes while it waits, zklocks.ErrAlreadyLocked
// when this Mutex holds the write lock or is acquiring it, and ErrUpgrade
// while it holds or acquires the read lock. Whenever it fails, its node
// is gone from the ensemble before it returns or, when the ensemble can
// not be reached, is deleted in the background as soon as it can be.
func (m *Mutex) Lock(ctx context.Context) error { return m.w.Lock(ctx) }

// TryLock takes the write lock only if nobody is in the queue, without
// waiting; it fails with zklocks.ErrLocked otherwise.
func (m *Mutex) TryLock(ctx context.Context) error { return m.w.TryLock(ctx) }

// Unlock releases the write lock by deleting its node. It returns
// zklocks.ErrNotLocked when the write lock is not held, and zklocks.ErrLockLost when the
// hold had already been lost. When the ensemble can not be reached the
// delete goes on in the background, and Unlock returns nil.
func (m *Mutex) Unlock(ctx context.Context) error { return m.w.Unlock(ctx) }

// RLock takes the read lock: it joins the queue and waits until no
// writer is ahead of its node (readers ahead of it do not count). While
// this Mutex holds the write lock, RLock downgrades: it does not wait,
// and fails with ErrDowngrade when another writer is already waiting.
// Its other errors are Lock's, but for ErrUpgrade.
func (m *Mutex) RLock(ctx context.Context) error { return m.r.Lock(ctx) }

// TryRLock takes the read lock only if no writer is in the queue, without
// waiting; it fails with zklocks.ErrLocked otherwise.
func (m *Mutex) TryRLock(ctx context.Context) error { return m.r.TryLock(ctx) }

// RUnlock releases the read lock, as Unlock does the write lock.
func (m *Mutex) RUnlock(ctx context.Context) error { return m.r.Unlock(ctx) }

// Writer returns the write side of m as a zklocks.Locker: Lock, TryLock
// and Unlock are m's, Token and Done those of the write hold.
func (m *Mutex) Writer() *Side { return &m.w }

// Reader returns the read side of m as a zklocks.Locker: its Lock,
// TryLock and Unlock are m's RLock, TryRLock and RUnlock, Token and Done
// those of the read hold. The Locker contract's exclusion holds between a
// reader and a writer only: readers share the lock.
func (m *Mutex) Reader() *Side { return &m.r }

// Stats returns the requests m has sent and the watch events it has
// received, both sides together.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
