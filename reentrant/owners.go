package reentrant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// This file is the layer in front of the queue, as Curator's
// InterProcessMutex sits on LockInternals: which owner has the Mutex's one
// node and how deep, the turns the other owners of the Mutex take, and the
// Unlocks owed to a hold that was lost. The node itself, its watch and its
// log are the lockq.Slot's.

// errHoldChanged says the hold a step was meant for ended before the step
// touched it: look at the Mutex again.
var errHoldChanged = errors.New("reentrant: hold changed")

// debt is what the owner of a lost hold is still owed: Unlocks, each of
// which answers with the loss instead of zklocks.ErrNotLocked.
type debt struct {
	left  int
	err   error
	token int64 // the lost hold's fencing token
}

// reenter is step 0 for owner: when it holds the lock, one more level.
// done is false, and nothing changed, when it does not hold the lock.
func (m *Mutex) reenter(ctx context.Context, owner string) (done bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	for {
		m.reapIfLost(ctx)
		m.mu.Lock()
		mine, acquiring := m.owner == owner, m.count == 0
		m.mu.Unlock()
		switch {
		case !mine:
			return false, nil
		case acquiring:
			return true, zklocks.ErrAlreadyLocked
		}
		if err := m.move(ctx, owner, +1); err != errHoldChanged {
			return true, err
		}
	}
}

// awaitTurn waits until no other owner of this Mutex holds or acquires
// its node, and takes the turn (true) for owner: the turn and its owner
// are set together, under the lock, so that another goroutine of the
// same owner sees it at once. false with no error: the hold it waited
// for has been lost, or owner itself (another goroutine of it) has the
// turn now; look again. TryLock (wait false) does not wait.
func (m *Mutex) awaitTurn(ctx context.Context, owner string, wait bool, start time.Time) (bool, error) {
	m.mu.Lock()
	if m.turn == nil {
		m.turn, m.owner, m.count = make(chan struct{}), owner, 0
		m.mu.Unlock()
		return true, nil
	}
	other, acquiring, freed := m.owner, m.count == 0, m.turn
	var lost <-chan struct{} // nil while acquiring or ending: only the free turn can come then
	if n := m.slot.HeldLocked(); n != nil && !acquiring {
		lost = n.Monitor().Done()
	}
	m.mu.Unlock()

	switch {
	case other == owner:
		return false, nil // this owner took the turn since reenter looked: look again
	case !wait && other == "":
		return false, zklocks.ErrLocked // the last hold is still being released
	case !wait && acquiring:
		return false, fmt.Errorf("%w: owner %q is acquiring it", zklocks.ErrLocked, other)
	case !wait:
		return false, fmt.Errorf("%w: held by owner %q", zklocks.ErrLocked, other)
	}
	lg := m.base.Log.Attempt(owner, start)
	if other != "" {
		lg.WaitBehind(ctx, other)
	}
	select {
	case <-freed:
		return false, nil // free now: take it on the next round, if nobody is faster
	case <-lost:
		return false, nil // reapIfLost ends it on the next round
	case <-ctx.Done():
		lg.Abandon(ctx, "", start, ctx.Err())
		return false, ctx.Err()
	}
}

// take runs the recipe for a new node of owner, in its turn.
func (m *Mutex) take(ctx context.Context, owner string, wait bool, start time.Time) error {
	err := m.slot.Take(ctx, m.base.Log.Attempt(owner, start), func(n *lockq.Node) error { return m.lock(ctx, owner, n, wait) })

	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.owner = ""
		m.giveTurnLocked()
		return err
	}
	m.count, m.version, m.last = 1, 0, nil // a new hold: Token is its token now
	return nil
}

// giveTurnLocked frees the turn once the slot is idle again, and wakes
// every owner waiting for it.
func (m *Mutex) giveTurnLocked() {
	close(m.turn)
	m.turn = nil
}

// move changes owner's depth by delta (+1 a re-entry, -1 an Unlock) and
// releases the node when the depth reaches zero. It returns
// errHoldChanged, having changed nothing, when owner does not hold.
func (m *Mutex) move(ctx context.Context, owner string, delta int) error {
	m.step.Lock()
	defer m.step.Unlock()

	m.mu.Lock()
	if m.owner != owner || m.count == 0 || m.slot.LostLocked() != nil {
		m.mu.Unlock()
		return errHoldChanged // not ours, or lost since the caller looked: never re-entered
	}
	depth, hl := m.count+delta, m.slot.LogLocked()
	switch {
	case depth == 0:
		m.owner, m.count = "", 0
		m.mu.Unlock()
		return m.release(ctx)
	case m.mode == InMemory:
		m.count = depth
		m.mu.Unlock()
	default:
		w := countWrite{owner: owner, depth: depth, node: m.slot.HeldLocked(), version: m.version}
		m.mu.Unlock()
		if err := m.writeDepth(ctx, w); err != nil {
			return err
		}
	}
	if delta > 0 {
		hl.Reenter(ctx, depth)
	} else {
		hl.Exit(ctx, depth)
	}
	return nil
}

// reapIfLost ends the hold if it has been lost (its watch saw the node
// go, or an InNode count write failed): its owner's levels become Unlocks
// owed, and its node is deleted, for it may still exist (the client was cut off
// but its session lived on). The delete waits at most until ctx ends or
// a session timeout passes; what is left is done in the background, so a
// waiter that reaps a lost hold is not held up past its own deadline.
func (m *Mutex) reapIfLost(ctx context.Context) {
	m.mu.Lock()
	why := m.slot.LostLocked()
	if why == nil || m.count == 0 {
		m.mu.Unlock()
		return
	}
	m.oweLocked(why)
	m.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, m.base.Session.Timeout())
	defer cancel()
	_ = m.release(cctx) // zklocks.ErrLockLost: the loss is recorded already
}

// oweLocked ends the hold as lost: its owner's levels become Unlocks owed,
// each answered with why, and Token reports the lost hold's token until
// they are answered.
func (m *Mutex) oweLocked(why error) {
	d := m.owed[m.owner]
	if d == nil {
		d = &debt{}
		m.owed[m.owner] = d
	}
	d.left, d.err, d.token = d.left+m.count, why, m.slot.HeldLocked().Token()
	m.owner, m.count, m.last = "", 0, d
}

// release deletes the node of the hold just ended and gives the turn to
// the next owner.
func (m *Mutex) release(ctx context.Context) error {
	err := m.slot.Unlock(ctx)
	m.mu.Lock()
	m.giveTurnLocked()
	m.mu.Unlock()
	return err
}

// reportLost answers one Unlock owed to owner's lost hold.
func (m *Mutex) reportLost(owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.owed[owner]
	if d == nil { // answered meanwhile by a concurrent Unlock
		return zklocks.ErrNotLocked
	}
	if d.left--; d.left <= 0 {
		delete(m.owed, owner)
		if m.last == d {
			m.last = nil // the loss is reported in full: no hold, Token 0
		}
	}
	return d.err
}
