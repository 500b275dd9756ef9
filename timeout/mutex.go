package timeout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
)

// Errors of the timeout lock alone; it returns the module's shared ones
// (zklocks.ErrLocked, ...) too. A hold lost to its lease is
// zklocks.ErrLockLost and also ErrEvicted or ErrLeaseExpired.
var (
	ErrBadLease     = errors.New("invalid lease")
	ErrWaitTimeout  = errors.New("wait bound passed")
	ErrEvicted      = errors.New("evicted")
	ErrLeaseExpired = errors.New("lease not renewed in time")
)

// MinLease is the shortest lease WithLease accepts. The holder keeps at
// least 200ms of every lease in hand for a late timer (see giveUpFloor),
// and must still let two renewals, lease/3 apart, fail in a row before it
// gives up: at MinLease it gives up 800ms after its last renewal.
const MinLease = time.Second

// WithLease gives every hold of this Mutex a lease of d (whole
// milliseconds, at least MinLease): the holder records d in its node,
// renews the node every d/3 while it holds the lock, and waiters evict it
// once it has gone d of ZooKeeper's time without a renewal. Without
// WithLease a hold lasts until Unlock or the end of the session, as in the
// sequential lock; the Mutex still evicts other holders whose lease ran
// out while it waits.
func WithLease(d time.Duration) zklocks.Option {
	return zklocks.VariantOption(optLease, d)
}

const (
	optLease = "timeout.WithLease"
	optClock = "timeout.clock" // set by the tests only (export_test.go)
)

// clock is the lease logic's local time. It only schedules (when to
// renew, when to look at the head) and times the holder's own belief in
// its hold; whether another's lease has run out is decided by ZooKeeper's
// clock alone. Tests skew it and stop it.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Mutex is one contender for the lock at one path: the sequential lock
// plus an acquire bound (LockTimeout) and an optional hold lease
// (WithLease). Its methods are safe for concurrent use.
type Mutex struct {
	base      *lockbase.Base // its client sends every request: the queue's and the lease's
	q         *lockq.Queue
	lease     time.Duration // 0 without WithLease
	clock     clock
	evictions atomic.Int64 // eviction deletes that succeeded

	mu      sync.Mutex
	slot    *lockq.Slot // idle, acquiring or held; guarded by mu
	renewal *renewal    // the current hold's lease, nil without one; guarded by mu
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends no request. Besides the options every variant takes
// (zklocks.WithACL, zklocks.WithLogger), it takes this package's
// WithLease; without it the Mutex has no lease of its own, and still
// judges the leases of the contenders ahead of it.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	m := &Mutex{clock: wallClock{}}
	b, err := lockbase.Open("timeout", s, path, opts, m.options,
		oplog.Reason{Err: ErrEvicted, Name: oplog.ReasonEvicted},
		oplog.Reason{Err: ErrLeaseExpired, Name: oplog.ReasonLeaseExpired})
	if err != nil {
		return nil, err
	}
	cfg := lockq.Config{Data: encodeLease(m.lease, false), ACL: b.ACL}
	if m.lease > 0 {
		cfg.NameLoss = evicted
	}
	m.base, m.q = b, lockq.New(b.Client, path, cfg)
	m.slot = lockq.NewSlot(&m.mu, m.q)
	return m, nil
}

// options takes the timeout lock's own options.
func (m *Mutex) options(o *lockopt.Options) error {
	m.lease, _ = lockopt.Take[time.Duration](o, optLease)
	if c, ok := lockopt.Take[clock](o, optClock); ok {
		m.clock = c
	}
	if m.lease != 0 && (m.lease < MinLease || m.lease%time.Millisecond != 0) {
		return fmt.Errorf("%w: %w: %v (want whole milliseconds, at least %v)", zklocks.ErrBadOption, ErrBadLease, m.lease, MinLease)
	}
	return nil
}

var _ zklocks.Locker = (*Mutex)(nil)

// Lock acquires the lock, waiting until it is free, ctx is done, or an
// error makes waiting pointless. While it waits it evicts a holder whose
// lease has run out. With a lease, the hold's first write (the "held"
// record) is sent as Lock returns, or before when the wait was long (see
// docs/04-timeout.md, "Why a judge never evicts a live holder: the four
// cases"). On any failure our node is deleted
// before Lock returns (or, if the connection is down, in the background
// until the session ends).
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.acquire(ctx, true)) }

// TryLock is Lock without waiting: it fails with zklocks.ErrLocked when another
// contender holds the lock or is ahead of us in the queue.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.acquire(ctx, false))
}

// LockTimeout is Lock with a bound on the wait: after d it gives up,
// deletes our node, and returns an error that is both ErrWaitTimeout and
// context.DeadlineExceeded. d <= 0 does not wait at all (TryLock). A
// deadline or cancellation of ctx itself returns ctx's error as Lock does.
func (m *Mutex) LockTimeout(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return m.TryLock(ctx)
	}
	bounded, cancel := context.WithTimeoutCause(ctx, d, ErrWaitTimeout)
	defer cancel()
	err := m.acquire(bounded, true)
	if ctx.Err() == nil {
		err = boundPassed(err, context.Cause(bounded), d)
	}
	return m.base.Fail("lock", err)
}

// boundPassed names the wait bound d as the reason of err when it is:
// err is the bounded context's deadline and its cause the bound. Any other
// error (the node deleted a moment before the bound, say) is left as it
// is, whatever the context says by then.
func boundPassed(err, cause error, d time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(cause, ErrWaitTimeout) {
		return fmt.Errorf("%w after %v: %w", ErrWaitTimeout, d, context.DeadlineExceeded)
	}
	return err
}

// acquire runs the recipe in the slot, and keeps the new hold's renewal
// for Unlock.
func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	j := newJudge(m)
	return m.slot.Take(ctx, m.base.Log, func(n *lockq.Node) error {
		if err := m.lock(ctx, n, wait, j); err != nil {
			return err
		}
		// Kept before the slot holds, so that no Unlock can release
		// this hold without finding its renewal.
		m.mu.Lock()
		m.renewal = j.renewal
		m.mu.Unlock()
		return nil
	})
}

// Unlock releases the lock. It fails with zklocks.ErrNotLocked when the Mutex
// does not hold it, and with zklocks.ErrLockLost when the hold was lost before
// Unlock (evicted, lease not renewed in time, node deleted, session
// expired); the node is gone either way, or goes in the background when
// the ensemble cannot be reached before ctx ends. After a loss, Unlock is
// also what makes the Mutex ready for the next Lock, as in the sequential
// lock.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	err := m.slot.Unlock(ctx)
	if errors.Is(err, zklocks.ErrNotLocked) {
		return err // nothing released (an acquisition may be under way)
	}
	m.mu.Lock()
	r := m.renewal
	m.renewal = nil
	m.mu.Unlock()
	if r != nil {
		// The release ended the hold, and so the renewals: let the last one
		// return, but not past ctx. After a lease loss on a silent link it
		// may be deleting our node for up to a lease; that delete goes on
		// without us, and ends with the lease or the session.
		select {
		case <-r.exited:
		case <-ctx.Done():
		}
	}
	return err
}

// Token returns the fencing token of the current hold (its node's czxid),
// or 0 when the lock is not held. Like the sequential lock, it keeps
// returning the token of a hold that was lost (evicted, say) until Unlock:
// that token is smaller than the token of every later hold, so a resource
// that remembers the largest token it has seen rejects the stale holder.
func (m *Mutex) Token() int64 { return m.slot.Token() }

// Done returns a channel that is closed when the current hold ends:
// Unlock, eviction, a renewal that could not be made in time, the node
// deleted, the session expired, or cut off so long that the servers may
// soon expire the session. When the lock is not held it returns a closed
// channel.
func (m *Mutex) Done() <-chan struct{} { return m.slot.Done() }

// Revoked returns a channel that is closed when a client has asked the
// current hold to give the lock up (sequential.Revoke, zklocks revoke,
// Curator's Revoker). Asking ends nothing: the holder decides when to
// Unlock, and Done closes only when the hold ends. nil, a channel that
// never closes, when the lock is not held.
func (m *Mutex) Revoked() <-chan struct{} { return m.slot.Revoked() }

// Err returns why the last hold was lost, wrapped in zklocks.ErrLockLost
// (and in ErrEvicted or ErrLeaseExpired when its lease ended it); nil
// while the lock is held (and not lost), after a plain Unlock, and before
// the first hold.
func (m *Mutex) Err() error { return m.slot.Err() }

// Node returns the full path of this Mutex's node while it holds the
// lock, or while it acquires it once the node is created; "" otherwise.
func (m *Mutex) Node() string { return m.slot.Node() }

// Lease returns the lease of this Mutex's holds, 0 for none.
func (m *Mutex) Lease() time.Duration { return m.lease }

// Evictions returns how many holders this Mutex has evicted while it
// waited: its eviction deletes that succeeded.
func (m *Mutex) Evictions() int64 { return m.evictions.Load() }

// Stats returns the ZooKeeper traffic of this Mutex so far: the queue's
// requests plus the lease's stamps, renewals, checks and evictions.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }

// evicted names a hold's loss: only a judge deletes a node that declares
// a lease, so our node deleted by another client means we were evicted.
func evicted(reason error) error {
	if errors.Is(reason, hold.ErrNodeDeleted) {
		return fmt.Errorf("%w: %w", ErrEvicted, reason)
	}
	return reason
}
