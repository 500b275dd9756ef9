package reentrant

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

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

// Mutex is one contender for a re-entrant lock on one path. Many owners in
// a process may share a Mutex: the one that holds it re-enters freely, the
// others wait, in this process, until it has fully released the lock, and
// then queue on ZooKeeper like contenders from other processes. Its methods
// are safe for concurrent use.
type Mutex struct {
	base *lockbase.Base // its client sends every request: the queue's and the count writes of InNode
	q    *lockq.Queue
	mode CountMode
	self Holder // our node's data but the owner and the count: host, pid, mode

	// step serialises the holder's count changes and the release, so that
	// two goroutines of one owner cannot interleave a count write with the
	// delete of the node. Unlike mu it is held across requests; only calls
	// of the holding owner take it.
	step sync.Mutex

	mu   sync.Mutex  // guards the slot and the fields below; never held across a request
	slot *lockq.Slot // the one contender: idle, acquiring or held
	// turn is taken while an owner holds or acquires the node, or its
	// release is still under way: the other owners of this Mutex wait for
	// it here, not on ZooKeeper. nil when free; closed when given back.
	turn    chan struct{}
	owner   string // who acquires or holds the slot's node; "" if nobody
	count   int    // the hold's depth; 0 while acquiring
	version int32  // InNode: the node's data version after our last write
	owed    map[string]*debt
	last    *debt // the lost hold Token reports until its Unlocks are answered
}

// New returns a Mutex for the lock at path on session s. It checks its
// arguments and sends no request. Besides the options every variant takes
// (zklocks.WithACL, zklocks.WithLogger), it takes this package's
// WithCountMode.
func New(s *zklocks.Session, path string, opts ...zklocks.Option) (*Mutex, error) {
	var mode CountMode
	b, err := lockbase.Open("reentrant", s, path, opts, func(o *lockopt.Options) (err error) {
		mode, err = takeMode(o)
		return err
	}, oplog.Reason{Err: errCountWrite, Name: oplog.ReasonCountWrite})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	m := &Mutex{base: b, q: lockq.New(b.Client, path, lockq.Config{ACL: b.ACL}),
		mode: mode, self: Holder{Host: host, PID: os.Getpid(), Mode: mode.String()},
		owed: map[string]*debt{}}
	m.slot = lockq.NewSlot(&m.mu, m.q)
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
		m.reapIfLost(ctx)
		m.mu.Lock()
		holder, holding := m.owner, m.count > 0
		_, owes := m.owed[owner]
		m.mu.Unlock()

		switch {
		case holder == owner && holding:
			if err := m.move(ctx, owner, -1); err != errHoldChanged {
				return err
			}
		case owes:
			return m.reportLost(owner)
		case holder == "" || holder == owner: // nobody, or our Lock still waiting
			return zklocks.ErrNotLocked
		default:
			return fmt.Errorf("%w: held by owner %q", ErrNotOwner, holder)
		}
	}
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
	if n := m.slot.HeldLocked(); n != nil {
		return n.Token() // a lost hold not reaped yet still has its token there
	}
	if m.last != nil {
		return m.last.token
	}
	return 0
}

// Done returns a channel that is closed when the current hold ends: at the
// last Unlock, or when the hold is lost. When the lock is not held it
// returns a closed channel.
func (m *Mutex) Done() <-chan struct{} { return m.slot.Done() }

// Revoked returns a channel that is closed when a client has asked the
// current hold to give the lock up (sequential.Revoke, zklocks revoke,
// Curator's Revoker). Asking ends nothing: the holder decides when to
// Unlock, and Done closes only when the hold ends. nil, a channel that
// never closes, when the lock is not held.
func (m *Mutex) Revoked() <-chan struct{} { return m.slot.Revoked() }

// Err returns why the last hold was lost, wrapped in zklocks.ErrLockLost;
// nil while the lock is held (and not lost), after a plain release, and
// before the first hold.
func (m *Mutex) Err() error { return m.slot.Err() }

// Count returns the re-entry depth of the owner in ctx: how many Unlocks
// it owes the current hold, 0 if it does not hold the lock (or has lost it).
func (m *Mutex) Count(ctx context.Context) int {
	owner, ok := OwnerFrom(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok || owner != m.owner || m.slot.LostLocked() != nil {
		return 0
	}
	return m.count
}

// Stats returns the ZooKeeper traffic of this Mutex so far: the queue's
// requests plus the count writes of InNode.
func (m *Mutex) Stats() zklocks.Stats { return m.base.Stats() }
