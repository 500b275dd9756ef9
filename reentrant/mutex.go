package reentrant

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockbase"
	"github.com/zklocks/zklocks/internal/lockopt"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
)

// Errors of the re-entrant lock alone; it returns the module's shared
// ones (zklocks.ErrLocked, ...) too.
var (
	ErrNoOwner  = errors.New("no owner in context")
	ErrNotOwner = errors.New("not the owner")
)

// WithCountMode chooses where the re-entry count is kept (default
// InMemory). A mode that is neither makes New fail with
// zklocks.ErrBadOption.
func WithCountMode(c CountMode) zklocks.Option {
	return func(o *lockopt.Options) { o.Set(optMode, c) }
}

const optMode = "reentrant.WithCountMode"

// Mutex is one contender for a re-entrant lock on one path. Many owners in
// a process may share a Mutex: the one that holds it re-enters freely, the
// others wait, in this process, until it has fully released the lock, and
// then queue on ZooKeeper like contenders from other processes. Its methods
// are safe for concurrent use.
type Mutex struct {
	base *lockbase.Base // its client sends every request: the queue's and the count writes of InNode
	q    *lockq.Queue
	mode CountMode
	host string
	pid  int

	// gate admits one owner at a time to the ZooKeeper lock: it holds a
	// value exactly when no owner holds or is acquiring the lock. Owners
	// of this Mutex wait here, not on ZooKeeper, while another of them
	// holds it.
	gate chan struct{}

	mu   sync.Mutex // guards the fields below; never held across a request
	cur  *holding   // the owner holding or acquiring the lock; nil if none
	lost map[string]*lostHold
	// last is the most recent hold when it was lost and its owner still
	// owes it Unlocks: Token reports its token until then.
	last *lostHold
}

// holding is one owner's hold: one node.
type holding struct {
	owner string
	node  *lockq.Node

	// step serialises the owner's own count changes and the release, so
	// that two goroutines using one owner at once cannot interleave a
	// count write with the release of the node. Unlike Mutex.mu it is held
	// across the InNode write and the release; only calls by the owner of
	// this hold ever wait for it.
	step sync.Mutex

	// Guarded by Mutex.mu.
	held      bool        // false while acquiring
	releasing bool        // Unlock is deleting the node; not a loss
	count     int         // re-entry depth, 1 after the first Lock
	version   int32       // InNode: the node's data version after our last write
	log       *oplog.Hold // the hold's operation log, nil when off
}

// lostHold remembers a hold that was lost while its owner still had Unlocks
// to make, so that each of them returns zklocks.ErrLockLost instead of zklocks.ErrNotLocked.
type lostHold struct {
	left  int
	err   error
	token int64 // the lost hold's fencing token
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends no request.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	mode := InMemory
	b, err := lockbase.Open("reentrant", s, path, opts, func(o *lockopt.Options) error {
		if c, ok := lockopt.Take[CountMode](o, optMode); ok {
			mode = c
		}
		if mode != InMemory && mode != InNode {
			return fmt.Errorf("%w: unknown count mode %d", zklocks.ErrBadOption, int(mode))
		}
		return nil
	}, oplog.Reason{Err: errCountWrite, Name: oplog.ReasonCountWrite})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	m := &Mutex{base: b, q: lockq.New(b.Client, path, lockq.Config{ACL: b.ACL, Lost: zklocks.ErrLockLost}),
		mode: mode, host: host, pid: os.Getpid(), gate: make(chan struct{}, 1), lost: map[string]*lostHold{}}
	m.gate <- struct{}{}
	return m, nil
}

var _ zklocks.Locker = (*Mutex)(nil)

// Lock acquires the lock for the owner in ctx (see WithOwner), waiting as
// long as it takes or until ctx is done (a done ctx fails even a
// re-entry). If that owner already holds it, Lock only counts one more
// level and returns at once (InMemory: no request; InNode: one versioned
// write of the count, and the read that re-arms the hold's watch on the
// node after it). Another owner of this Mutex waits
// until the holder has fully released it. Lock without an owner fails with
// ErrNoOwner; Lock while the same owner's first Lock is still waiting fails
// with zklocks.ErrAlreadyLocked.
//
// A hold that has been lost is never re-entered: Lock then queues for a new
// node like any contender, and the Unlocks still owed to the lost hold
// return zklocks.ErrLockLost.
func (m *Mutex) Lock(ctx context.Context) error { return m.base.Fail("lock", m.enter(ctx, true)) }

// TryLock is Lock without waiting for another holder: it fails with
// zklocks.ErrLocked when another owner, here or elsewhere, holds the lock. A
// re-entry succeeds as with Lock.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.base.Fail("trylock", m.enter(ctx, false))
}

// enter is Lock and TryLock for the owner in ctx: a re-entry when it holds
// the lock, a wait in this process while another owner of this Mutex
// holds it, else the queue's recipe (recipe.go).
func (m *Mutex) enter(ctx context.Context, wait bool) error {
	owner, ok := OwnerFrom(ctx)
	if !ok {
		return ErrNoOwner
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := m.base.Log.Now()
	for {
		m.mu.Lock()
		stale := m.reapLocked()
		h := m.cur
		var mine, acquiring bool
		var lost <-chan struct{}
		if h != nil {
			mine, acquiring = h.owner == owner, !h.held
			if !acquiring && !h.releasing {
				lost = h.node.Monitor().Done()
			}
		}
		m.mu.Unlock()
		m.releaseLost(ctx, stale)

		switch {
		case mine && acquiring:
			return zklocks.ErrAlreadyLocked
		case mine:
			err := m.step(ctx, h, +1)
			if err == errHoldChanged {
				continue // the hold ended under us: queue for a new one
			}
			return err
		case h != nil && !wait && acquiring:
			return fmt.Errorf("%w: owner %q is acquiring it", zklocks.ErrLocked, h.owner)
		case h != nil && !wait:
			return fmt.Errorf("%w: held by owner %q", zklocks.ErrLocked, h.owner)
		case !wait:
			select {
			case <-m.gate:
				return m.acquire(ctx, owner, false, start)
			default:
				return zklocks.ErrLocked // another owner took the gate just now
			}
		}
		if h != nil && m.base.Log != nil {
			m.base.Log.Attempt(owner, start).WaitBehind(ctx, h.owner)
		}
		select {
		case <-m.gate:
			return m.acquire(ctx, owner, true, start)
		case <-lost:
			// The holder lost its hold: reap it on the next round.
		case <-ctx.Done():
			if m.base.Log != nil {
				m.base.Log.Attempt(owner, start).Abandon(ctx, "", start, ctx.Err())
			}
			return ctx.Err()
		}
	}
}

// acquire takes a new node for owner, in a Lock that began at start. The
// caller holds the gate.
func (m *Mutex) acquire(ctx context.Context, owner string, wait bool, start time.Time) error {
	lg := m.base.Log.Attempt(owner, start)
	n := lockq.NewNode(lg)
	h := &holding{owner: owner, node: n}
	m.mu.Lock()
	m.cur = h
	m.mu.Unlock()

	err := m.lock(ctx, owner, n, wait)
	if err != nil {
		m.q.Abandon(ctx, n)
		if lg != nil && !errors.Is(err, zklocks.ErrLocked) {
			lg.Abandon(ctx, n.Path(), start, err)
		}
	}
	var hl *oplog.Hold // written before m.mu is taken: a slow log handler must not hold up the other owners
	if err == nil {
		n.Monitor().Acquired(ctx)
		if lg != nil {
			hl = lg.Acquire(ctx, n.Path(), n.Token(), m.base.Session.Conn().SessionID(), start)
			n.Monitor().OnLoss(func(reason error) { hl.Lost(context.Background(), reason) })
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.endLocked(h)
		return err
	}
	h.held, h.count, h.log = true, 1, hl
	m.last = nil // a new hold: Token is its token now
	return nil
}

// errHoldChanged says the hold a step was meant for ended before the step
// touched it: look at the Mutex again.
var errHoldChanged = errors.New("reentrant: hold changed")

// step moves h's count by delta (+1 re-entry, -1 Unlock) and releases the
// node when the count reaches zero. It returns errHoldChanged, having
// changed nothing, when h is no longer the live hold.
func (m *Mutex) step(ctx context.Context, h *holding, delta int) error {
	h.step.Lock()
	defer h.step.Unlock()

	m.mu.Lock()
	stale := m.reapLocked()
	if m.cur != h || !h.held {
		m.mu.Unlock()
		m.releaseLost(ctx, stale)
		return errHoldChanged
	}
	n := h.count + delta
	switch {
	case n == 0:
		h.releasing = true
		m.mu.Unlock()
		return m.release(ctx, h)
	case m.mode == InMemory:
		h.count = n
		m.mu.Unlock()
		h.logDepth(ctx, delta, n)
		return nil
	}
	version := h.version
	m.mu.Unlock()

	// InNode: one versioned write. The caller's cancellation does not cut
	// it short: an abandoned write would leave us not knowing the node's
	// version, so it runs to its end (at most a session timeout).
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.base.Session.Timeout())
	stat, err := m.writeCount(wctx, h.node.Path(), m.record(h.owner, n), version)
	cancel()

	m.mu.Lock()
	stale = m.reapLocked()
	switch {
	case m.cur != h:
		// Lost while we wrote (reaped by us or by a waiter).
		m.mu.Unlock()
		m.releaseLost(ctx, stale)
		if delta < 0 {
			return m.reportLost(h.owner)
		}
		return errHoldChanged
	case err == nil:
		h.count, h.version = n, stat.Version
		m.mu.Unlock()
		h.logDepth(ctx, delta, n)
		return nil
	}
	// The write failed: with BadVersion someone else wrote to our node,
	// with NoNode it was deleted, with a timeout the ensemble could not be
	// reached for a session timeout (a blip shorter than that is ridden
	// out by writeCount), with anything else we no longer know what the
	// node says. The hold cannot be trusted: end it as lost and remove our
	// node if it is still there.
	why := fmt.Errorf("%w: %w: %w", zklocks.ErrLockLost, errCountWrite, err)
	owed := h.count
	if delta < 0 {
		owed-- // this Unlock is answered now
	}
	h.releasing = true // our own release below must not look like a loss
	m.loseLocked(h, owed, why)
	m.mu.Unlock()
	h.log.Lost(ctx, why) // before releaseLost, which must not log one
	m.releaseLost(ctx, h.node)
	if delta < 0 {
		return why
	}
	return errHoldChanged
}

// logDepth logs a count change that leaves the hold held.
func (h *holding) logDepth(ctx context.Context, delta, n int) {
	if delta > 0 {
		h.log.Reenter(ctx, n)
	} else {
		h.log.Exit(ctx, n)
	}
}

// release deletes h's node. The caller holds h.step and has set h.releasing.
func (m *Mutex) release(ctx context.Context, h *holding) error {
	err := m.q.Release(ctx, h.node)
	if errors.Is(err, zklocks.ErrLockLost) {
		h.log.Lost(ctx, err) // once: the monitor may have written it already
	} else {
		h.log.Release(ctx, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.endLocked(h)
	return err
}

// Unlock undoes one Lock of the owner in ctx: it decrements the count and
// releases the node when the count reaches zero. Unlock by an owner that
// does not hold the lock fails with ErrNotOwner (another owner holds it) or
// zklocks.ErrNotLocked (nobody does) and changes nothing; without an owner it fails
// with ErrNoOwner. After the owner's hold was lost, each Unlock still owed
// to it returns zklocks.ErrLockLost.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base.Fail("unlock", m.unlock(ctx)) }

func (m *Mutex) unlock(ctx context.Context) error {
	owner, ok := OwnerFrom(ctx)
	if !ok {
		return ErrNoOwner
	}
	for {
		m.mu.Lock()
		stale := m.reapLocked()
		h := m.cur
		_, owed := m.lost[owner]
		m.mu.Unlock()
		m.releaseLost(ctx, stale)

		switch {
		case h != nil && h.owner == owner && h.held:
			err := m.step(ctx, h, -1)
			if err == errHoldChanged {
				continue
			}
			return err
		case owed:
			return m.reportLost(owner)
		case h == nil || h.owner == owner: // nobody, or our Lock still waiting
			return zklocks.ErrNotLocked
		default:
			return fmt.Errorf("%w: held by owner %q", ErrNotOwner, h.owner)
		}
	}
}

// reportLost answers one Unlock owed to owner's lost hold.
func (m *Mutex) reportLost(owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lost[owner]
	if l == nil { // answered meanwhile by a concurrent Unlock
		return zklocks.ErrNotLocked
	}
	if l.left--; l.left <= 0 {
		delete(m.lost, owner)
		if m.last == l {
			m.last = nil // the loss is reported in full: no hold, Token 0
		}
	}
	return l.err
}

// reapLocked ends the current hold if the watch on its node has seen it
// lost, recording the Unlocks its owner still owes. It returns the node to
// release (outside m.mu, with releaseLost), or nil.
func (m *Mutex) reapLocked() *lockq.Node {
	h := m.cur
	if h == nil || !h.held || h.releasing || !isClosed(h.node.Monitor().Done()) {
		return nil
	}
	m.loseLocked(h, h.count, fmt.Errorf("%w: %w", zklocks.ErrLockLost, h.node.Monitor().Err()))
	return h.node
}

// loseLocked ends h as lost, with owed Unlocks to answer with why. Its
// token stays what Token reports until they are answered.
func (m *Mutex) loseLocked(h *holding, owed int, why error) {
	m.last = nil
	if owed > 0 {
		l := m.lost[h.owner]
		if l == nil {
			l = &lostHold{}
			m.lost[h.owner] = l
		}
		l.left += owed
		l.err = why
		l.token = h.node.Token()
		m.last = l
	}
	m.cur = nil
	h.held = false
	m.gate <- struct{}{}
}

// endLocked ends h (released, or never acquired) and opens the gate.
func (m *Mutex) endLocked(h *holding) {
	m.cur = nil
	h.held = false
	m.gate <- struct{}{}
}

// releaseLost deletes the node of a lost hold, which may still exist (for
// example after a BadVersion, or when the client was cut off but its
// session survived). It waits at most until ctx ends or a session timeout
// passes: a delete that cannot be done by then is done later
// (lockq.Queue.Release), so a waiter that reaps a lost hold is not held up
// past its own deadline.
func (m *Mutex) releaseLost(ctx context.Context, n *lockq.Node) {
	if n == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, m.base.Session.Timeout())
	defer cancel()
	_ = m.q.Release(cctx, n) // zklocks.ErrLockLost expected: the loss is already recorded
}

// Token returns the fencing token of the current hold (its node's czxid),
// whichever owner holds it, or 0 when the lock is not held. Re-entries do
// not change it. Like the other variants, Token keeps returning a lost
// hold's token after Done has closed, until its owner's last owed Unlock
// has reported the loss (or a new hold has begun): a holder that goes on
// writing without noticing the loss presents its old, smaller token,
// which a fenced resource refuses.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.cur; h != nil && h.held {
		return h.node.Token() // a lost hold not reaped yet still has its token there
	}
	if m.last != nil {
		return m.last.token
	}
	return 0
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Done returns a channel that is closed when the current hold ends: at the
// last Unlock, or when the hold is lost. When the lock is not held it
// returns a closed channel.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.cur; h != nil && h.held {
		return h.node.Monitor().Done()
	}
	return closed
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Count returns the re-entry depth of the owner in ctx: how many Unlocks
// it owes the current hold, 0 if it does not hold the lock (or has lost it).
func (m *Mutex) Count(ctx context.Context) int {
	owner, ok := OwnerFrom(ctx)
	if !ok {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.cur
	if h == nil || !h.held || h.owner != owner || isClosed(h.node.Monitor().Done()) {
		return 0
	}
	return h.count
}

// Stats returns the ZooKeeper traffic of this Mutex so far: the queue's
// requests plus the count writes of InNode.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
