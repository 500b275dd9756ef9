package lockq

import (
	"context"
	"errors"
	"sync"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/oplog"
	"github.com/zklocks/zklocks/internal/zkop"
)

// Slot is one contender's cycle around a Keeper (a Queue, or the naive
// lock's fixed node): idle
// (no node), acquiring (a Node on its way), held (the Node holds the
// lock). It
// keeps what the lock's Token, Done, Err and Node report, and books the
// operation log's acquire, release and loss.
//
// A Slot has no mutex of its own: the lock's guards it, so that a lock
// with two slots (the read-write lock) can check both under one. Methods
// whose names end in Locked expect the caller to hold that mutex; the
// others take it.
type Slot struct {
	mu    *sync.Mutex
	k     Keeper
	state slotState
	cur   *Node       // the acquisition under way or the hold, nil when idle
	log   *oplog.Hold // the hold's operation log, nil when off
	lost  error       // why the last hold ended, if it was lost
}

type slotState int

const (
	slotIdle slotState = iota
	slotAcquiring
	slotHeld
)

// Keeper is where a Slot's nodes live: a Queue, or a primitive of its own
// built on the same Node (the naive lock's fixed node, naive/fixed.go).
type Keeper interface {
	// Abandon undoes an acquisition that failed.
	Abandon(ctx context.Context, n *Node)
	// Release ends a hold, and returns its loss when it had ended before.
	Release(ctx context.Context, n *Node) error
	// Client is the client the keeper sends its requests with.
	Client() *zkop.Client
	// Config is what the lock told the keeper.
	Config() Config
}

// Config returns what the lock told the Queue.
func (q *Queue) Config() Config { return q.cfg }

// NewSlot returns an idle Slot of k, guarded by mu.
func NewSlot(mu *sync.Mutex, k Keeper) *Slot { return &Slot{mu: mu, k: k} }

// IdleLocked reports whether the slot has no node.
func (s *Slot) IdleLocked() bool { return s.state == slotIdle }

// AcquiringLocked reports whether an acquisition is under way.
func (s *Slot) AcquiringLocked() bool { return s.state == slotAcquiring }

// HeldLocked returns the Node that holds the lock, nil when none does.
func (s *Slot) HeldLocked() *Node {
	if s.state != slotHeld {
		return nil
	}
	return s.cur
}

// Take is the whole acquisition of a lock with one slot: it fails with
// zklocks.ErrAlreadyLocked when the slot is not idle, and otherwise runs
// lock for a new Node (see TakeIf).
func (s *Slot) Take(ctx context.Context, log *oplog.Log, lock func(n *Node) error) error {
	return s.TakeIf(ctx, log, func() error {
		if !s.IdleLocked() {
			return zklocks.ErrAlreadyLocked
		}
		return nil
	}, lock)
}

// TakeIf is Take for a lock whose slot is not alone (the read-write
// lock's two sides): admit, run under the lock's mutex, decides whether
// the acquisition may begin, and must refuse it unless the slot is idle.
// Once admitted, the slot is acquiring and lock runs the recipe for a new
// Node. When lock fails, the Node is abandoned (Queue.Abandon,
// the naive lock's lockNode.Abandon) and the slot is idle again; the failure is logged unless
// it is a TryLock's "taken" (zklocks.ErrLocked). When it succeeds, the slot holds the
// lock from now on.
func (s *Slot) TakeIf(ctx context.Context, log *oplog.Log, admit func() error, lock func(n *Node) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := NewNode(log)
	s.mu.Lock()
	if err := admit(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.state, s.cur = slotAcquiring, n
	s.mu.Unlock()

	start := log.Now()
	err := lock(n)
	if err == nil {
		// The hold can end as it begins: the clock out after Acquired's
		// wait for a fresh proof, or the node gone since the listing.
		// Then it was never held: the caller must not be told otherwise.
		n.Monitor().Acquired(ctx)
		if lost := n.Monitor().Err(); lost != nil {
			err = s.k.Config().HoldLost(lost)
		}
	}
	if err != nil {
		s.k.Abandon(ctx, n)
		if log != nil && !errors.Is(err, zklocks.ErrLocked) {
			log.Abandon(ctx, n.Path(), start, err)
		}
		s.mu.Lock()
		s.state, s.cur = slotIdle, nil
		s.mu.Unlock()
		return err
	}
	var hl *oplog.Hold
	if log != nil {
		hl = log.Acquire(ctx, n.Path(), n.Token(), s.k.Client().Conn.SessionID(), start)
		// The loss is logged when the monitor sees it, not when the owner
		// next looks.
		n.Monitor().OnLoss(func(reason error) { hl.Lost(context.Background(), s.k.Config().named(reason)) })
	}
	s.mu.Lock()
	s.state, s.lost, s.log = slotHeld, nil, hl
	s.mu.Unlock()
	return nil
}

// Release ends the hold: it deletes the node (Queue.Release, or the naive lock's lockNode.Release) and logs the
// release or the loss. held is false, and nothing is done, when the slot
// does not hold the lock.
func (s *Slot) Release(ctx context.Context) (held bool, err error) {
	s.mu.Lock()
	if s.state != slotHeld {
		s.mu.Unlock()
		return false, nil
	}
	n, hl := s.cur, s.log
	s.state, s.cur, s.log = slotIdle, nil, nil
	s.mu.Unlock()

	err = s.k.Release(ctx, n)
	if errors.Is(err, zklocks.ErrLockLost) {
		hl.Lost(ctx, err) // once: the monitor may have written it already
		s.mu.Lock()
		s.lost = err
		s.mu.Unlock()
		return true, err
	}
	hl.Release(ctx, err)
	return true, err
}

// LogLocked is the hold's operation log, nil when logging is off or the
// slot does not hold; layers that add events to a hold (re-entry) write
// them there.
func (s *Slot) LogLocked() *oplog.Hold { return s.log }

// Unlock is Release as a lock's Unlock answers it: zklocks.ErrNotLocked
// when the slot does not hold.
func (s *Slot) Unlock(ctx context.Context) error {
	held, err := s.Release(ctx)
	if !held {
		return zklocks.ErrNotLocked
	}
	return err
}

// Token is the hold's fencing token, 0 when the slot does not hold.
func (s *Slot) Token() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != slotHeld {
		return 0
	}
	return s.cur.Token()
}

// Done is closed when the hold ends; a closed channel when the slot does
// not hold.
func (s *Slot) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != slotHeld {
		return closed
	}
	return s.cur.Monitor().Done()
}

// Revoked is closed when a client has asked the current hold to give the
// lock up (hold.Monitor.Revoked); nil, a channel that never closes, when
// the slot does not hold.
func (s *Slot) Revoked() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != slotHeld {
		return nil
	}
	return s.cur.Monitor().Revoked()
}

// Err is why the last hold was lost, wrapped in the lock's Lost sentinel;
// nil while it lasts, after a plain release, and before the first hold.
func (s *Slot) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == slotHeld {
		return s.LostLocked()
	}
	return s.lost
}

// LostLocked is why the current hold has been lost, as Err says it; nil
// while it lasts or when there is none.
func (s *Slot) LostLocked() error {
	if s.state != slotHeld {
		return nil
	}
	if err := s.cur.Monitor().Err(); err != nil && !errors.Is(err, hold.ErrReleased) {
		return s.k.Config().HoldLost(err)
	}
	return nil
}

// Node is the full path of the slot's node while it holds, or while it
// acquires once the node is made; "" otherwise.
func (s *Slot) Node() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return ""
	}
	return s.cur.Path()
}

// closed is the channel Done returns when there is no hold.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
