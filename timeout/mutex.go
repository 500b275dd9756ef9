package timeout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

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
// least 100ms of every lease in hand for a late timer (see giveUpFloor),
// and must still let two renewals, lease/3 apart, fail in a row before it
// gives up: at MinLease it gives up 400ms after its last renewal.
const MinLease = 500 * time.Millisecond

// WithLease gives every hold of this Mutex a lease of d (whole
// milliseconds, at least MinLease): the holder records d in its node,
// renews the node every d/3 while it holds the lock, and waiters evict it
// once it has gone d of ZooKeeper's time without a renewal. Without
// WithLease a hold lasts until Unlock or the end of the session, as in the
// sequential lock; the Mutex still evicts other holders whose lease ran
// out while it waits.
func WithLease(d time.Duration) zklocks.Option {
	return func(o *lockopt.Options) { o.Set(optLease, d) }
}

// withClock replaces the local clock of the lease logic (test seam). The
// clock is only ever used to schedule: decisions use ZooKeeper's clock.
func withClock(now func() time.Time) zklocks.Option {
	return func(o *lockopt.Options) { o.Set(optClock, now) }
}

const (
	optLease = "timeout.WithLease"
	optClock = "timeout.withClock"
)

// Mutex is one contender for the lock at one path: the sequential lock
// plus an acquire bound (LockTimeout) and an optional hold lease
// (WithLease). Its methods are safe for concurrent use.
type Mutex struct {
	base  *lockbase.Base // its client sends every request: the queue's and the lease's
	q     *lockq.Queue
	lease time.Duration // 0 without WithLease
	now   func() time.Time

	evictions  atomic.Int64 // eviction deletes that succeeded
	evictTries atomic.Int64 // eviction deletes sent
	// The other writes the lease logic sends, counted so that a test can
	// account for every quorum write: stamps and renewals of our own node
	// while holding, probes of it while waiting, deletes of it after
	// giving the hold up.
	stamps, renewals, probes, drops atomic.Int64

	gate renewalGate // tests pause renewals with it (seam.go)

	mu        sync.Mutex // guards the fields below; never held across a request
	acquiring *lockq.Node
	cur       *holding // the current hold, nil if none
	ended     error    // why the last hold ended
}

// holding is one hold: our node, and its lease.
type holding struct {
	node  *lockq.Node
	lease *leaseHold  // nil without a lease
	log   *oplog.Hold // nil when off
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends no request.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	m := &Mutex{now: time.Now}
	b, err := lockbase.Open("timeout", s, path, opts, m.options,
		oplog.Reason{Err: ErrEvicted, Name: oplog.ReasonEvicted},
		oplog.Reason{Err: ErrLeaseExpired, Name: oplog.ReasonLeaseExpired})
	if err != nil {
		return nil, err
	}
	m.base = b
	m.q = lockq.New(b.Client, path, lockq.Config{Data: encodeLease(m.lease, false), ACL: b.ACL, Lost: zklocks.ErrLockLost})
	return m, nil
}

// options takes the timeout lock's own options.
func (m *Mutex) options(o *lockopt.Options) error {
	m.lease, _ = lockopt.Take[time.Duration](o, optLease)
	if now, ok := lockopt.Take[func() time.Time](o, optClock); ok {
		m.now = now
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
// the package doc's lease argument). On any failure our node is deleted
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

func (m *Mutex) acquire(ctx context.Context, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lg := m.base.Log.Attempt("", m.base.Log.Now())
	n := lockq.NewNode(lg)
	m.mu.Lock()
	if m.acquiring != nil || m.cur != nil {
		m.mu.Unlock()
		return zklocks.ErrAlreadyLocked
	}
	m.acquiring = n
	m.mu.Unlock()

	h, err := m.take(ctx, n, wait, lg)
	if err == nil {
		if h.lease != nil {
			go h.lease.run()
		}
		// It may wait for the session's clock (a new connection); the
		// lease is renewed meanwhile.
		n.Monitor().Acquired(ctx)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquiring = nil
	if err != nil {
		return err
	}
	m.cur = h
	return nil
}

// take runs the recipe for node n and books the hold; lg is the
// attempt's log, nil when off.
func (m *Mutex) take(ctx context.Context, n *lockq.Node, wait bool, lg *oplog.Log) (*holding, error) {
	start := lg.Now()
	j := &checker{m: m, data: encodeLease(m.lease, false), joined: m.now()}
	if err := m.lock(ctx, n, wait, j); err != nil {
		m.q.Abandon(ctx, n)
		if j.lease != nil {
			j.lease.cancel()
		}
		if lg != nil && !errors.Is(err, zklocks.ErrLocked) {
			lg.Abandon(ctx, n.Path(), start, err)
		}
		return nil, err
	}
	h := &holding{node: n, lease: j.lease}
	if lg != nil {
		h.log = lg.Acquire(ctx, n.Path(), n.Token(), m.base.Session.Conn().SessionID(), start)
		if h.lease == nil {
			n.Monitor().OnLoss(func(reason error) { h.log.Lost(context.Background(), reason) })
		} else {
			h.lease.log = h.log
		}
	}
	return h, nil
}

// stamp begins the lease of the hold on node n, when there is one, and
// leaves it in j for take. The "held" record is the hold's first write;
// the lease runs from a moment known to precede the hold until that
// record lands, and from the record's send time after.
//
// That moment is j.joined, taken before our create was sent. While it
// leaves the hold more than a renewal interval, Lock returns at once and
// the record is written in the background, off the handoff's path; a
// waiter that queued for longer waits for the record before Lock returns.
func (m *Mutex) stamp(ctx context.Context, n *lockq.Node, j *checker) error {
	if m.lease == 0 {
		return nil
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &leaseHold{m: m, node: n, path: n.Path(), data: encodeLease(m.lease, true),
		lease: m.lease, ver: ver{0, true}, session: m.base.Session.Conn().SessionID(), lastOK: j.joined,
		ctx: lctx, cancel: cancel, done: make(chan struct{}), exited: make(chan struct{})}
	if j.self == l.path {
		l.ver = j.ver // we waited, and our probes moved the version
	}
	j.lease = l
	if l.giveUpAt().Sub(m.now()) > l.lease/renewalsPerLease {
		return nil // run writes the record first
	}
	err := l.stamp(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion), errors.Is(err, hold.ErrSessionExpired):
		return fmt.Errorf("%w: stamping the lease: %w", zklocks.ErrLockLost, err)
	}
	return fmt.Errorf("stamping the lease: %w", err)
}

// Unlock releases the lock. It fails with zklocks.ErrNotLocked when the Mutex
// does not hold it, and with zklocks.ErrLockLost when the hold was lost before
// Unlock (evicted, lease not renewed in time, node deleted, session
// expired); the node is gone either way. After a loss, Unlock is also
// what makes the Mutex ready for the next Lock, as in the sequential lock.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	m.mu.Lock()
	h := m.cur
	m.cur = nil
	m.mu.Unlock()
	if h == nil {
		return zklocks.ErrNotLocked
	}
	if h.lease != nil {
		h.lease.cancel()
		<-h.lease.exited
		if h.lease.err != nil {
			// The loss is the lease's. The node goes now, or, when ctx
			// ends first or the ensemble cannot be reached, in the
			// background (Release): Unlock returns when ctx says.
			_ = m.q.Release(ctx, h.node)
			m.finish(h.lease.err)
			return h.lease.err
		}
	}
	err := m.q.Release(ctx, h.node)
	if errors.Is(err, zklocks.ErrLockLost) {
		err = m.holdLoss(err)
		h.log.Lost(ctx, err) // once: the monitor may have written it already
		m.finish(err)
		return err
	}
	h.log.Release(ctx, err)
	m.finish(nil)
	return err
}

// finish books why the last hold ended.
func (m *Mutex) finish(why error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended = why
}

// Token returns the fencing token of the current hold (its node's czxid),
// or 0 when the lock is not held. Like the sequential lock, it keeps
// returning the token of a hold that was lost (evicted, say) until Unlock:
// that token is smaller than the token of every later hold, so a resource
// that remembers the largest token it has seen rejects the stale holder.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	h := m.cur
	m.mu.Unlock()
	if h == nil {
		return 0
	}
	return h.node.Token()
}

// Done returns a channel that is closed when the current hold ends:
// Unlock, eviction, a renewal that could not be made in time, the node
// deleted, the session expired, or cut off so long that the servers may
// soon expire the session. When the lock is not held it returns a closed
// channel.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	h := m.cur
	m.mu.Unlock()
	if h == nil {
		return closed
	}
	return m.doneOf(h)
}

// Err returns why the current hold ended, or the last one when none is
// held now; nil while the lock is held (and before the first hold).
func (m *Mutex) Err() error {
	m.mu.Lock()
	h, ended := m.cur, m.ended
	m.mu.Unlock()
	if h == nil {
		return ended
	}
	if !isClosed(m.doneOf(h)) {
		return nil
	}
	return m.errOf(h)
}

// Node returns the full path of this Mutex's node while it holds the
// lock, or while it acquires it once the node is created; "" otherwise.
func (m *Mutex) Node() string {
	m.mu.Lock()
	n := m.acquiring
	if m.cur != nil {
		n = m.cur.node
	}
	m.mu.Unlock()
	if n == nil {
		return ""
	}
	return n.Path()
}

// Lease returns the lease of this Mutex's holds, 0 for none.
func (m *Mutex) Lease() time.Duration { return m.lease }

// Evictions returns how many holders this Mutex has evicted while it
// waited: its eviction deletes that succeeded.
func (m *Mutex) Evictions() int64 { return m.evictions.Load() }

// Stats returns the ZooKeeper traffic of this Mutex so far: the queue's
// requests plus the lease's stamps, renewals, checks and evictions.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }

func (m *Mutex) doneOf(h *holding) <-chan struct{} {
	if h.lease != nil {
		return h.lease.done
	}
	return h.node.Monitor().Done()
}

// errOf is why a hold whose Done is closed ended.
func (m *Mutex) errOf(h *holding) error {
	if h.lease != nil {
		return h.lease.err
	}
	return m.monitorLoss(h.node)
}

// monitorLoss is why the watch on our node ended the hold, nil if it did
// not (or was released).
func (m *Mutex) monitorLoss(n *lockq.Node) error {
	if err := n.Monitor().Err(); err != nil && !errors.Is(err, hold.ErrReleased) {
		return m.holdLoss(fmt.Errorf("%w: %w", zklocks.ErrLockLost, err))
	}
	return nil
}

// holdLoss names a loss of our node: with a lease, a node deleted by
// someone else while we held it is an eviction.
func (m *Mutex) holdLoss(err error) error {
	if m.lease > 0 && errors.Is(err, hold.ErrNodeDeleted) {
		return fmt.Errorf("%w: %w", ErrEvicted, err)
	}
	return err
}

// idlePoll is how long a waiter waits before it looks at a head that
// declares no lease again: that head may leave and a head with a lease
// take its place without our predecessor changing.
func (m *Mutex) idlePoll() time.Duration {
	if m.lease > 0 {
		return m.lease
	}
	return m.base.Session.Timeout()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
