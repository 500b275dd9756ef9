package rwlock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// Side is the writer or the reader of a Mutex, as a zklocks.Locker: at
// most one node and one hold at a time, in its slot.
type Side struct {
	m    *Mutex
	read bool
	slot *lockq.Slot // guarded by m.mu
	// own is the name of our writer's node while it held the lock when
	// this reader began: a reader does not wait for it (a downgrade).
	own string
}

var _ zklocks.Locker = (*Side)(nil)

// Lock is the Mutex's Lock for the writer, RLock for the reader.
func (s *Side) Lock(ctx context.Context) error {
	return s.m.base.Fail(s.pick("lock", "rlock"), s.acquire(ctx, true))
}

// TryLock is the Mutex's TryLock for the writer, TryRLock for the reader.
func (s *Side) TryLock(ctx context.Context) error {
	return s.m.base.Fail(s.pick("trylock", "tryrlock"), s.acquire(ctx, false))
}

// Unlock is the Mutex's Unlock for the writer, RUnlock for the reader.
func (s *Side) Unlock(ctx context.Context) error {
	return s.m.base.Fail(s.pick("unlock", "runlock"), s.slot.Unlock(ctx))
}

// Token returns the fencing token of this side's current hold, the czxid
// of its node, or 0 when it holds nothing. Tokens grow in queue order, so
// a writer's token is larger than that of every hold before it; readers
// that share the lock have tokens in the order they queued.
func (s *Side) Token() int64 { return s.slot.Token() }

// Done returns a channel that is closed when this side's current hold
// ends (released, or lost: node deleted, session expired, or cut off so
// long that the servers may soon expire the session); a closed channel
// when it holds nothing. Like every Done of this module it comes late
// for a paused process: fence the resource with Token.
func (s *Side) Done() <-chan struct{} { return s.slot.Done() }

// Err returns why this side's last hold was lost, wrapped in
// zklocks.ErrLockLost; nil while it holds (and has not lost) the lock,
// after a plain release, and before its first hold.
func (s *Side) Err() error { return s.slot.Err() }

// Node returns the full path of this side's node while it holds or
// acquires the lock, "" otherwise.
func (s *Side) Node() string { return s.slot.Node() }

// Stats is the Mutex's Stats (both sides share one client).
func (s *Side) Stats() zklocks.Stats { return s.m.Stats() }

// pick returns the writer's of two names for the writer, the reader's
// for the reader.
func (s *Side) pick(writer, reader string) string {
	if s.read {
		return reader
	}
	return writer
}

// sep is the separator of this side's node names, Curator's.
func (s *Side) sep() string { return s.pick(writeSep, readSep) }

// The read-write lock's separators, Curator's InterProcessReadWriteLock's:
// its nodes and ours order each other's readers and writers.
const (
	readSep  = "-__READ__"
	writeSep = "-__WRIT__"
)

// blocks picks the nodes ahead of ours that keep this side waiting: for
// a writer every node (nil), for a reader the writers other than our own.
func (s *Side) blocks() func(name string) bool {
	if !s.read {
		return nil
	}
	own := s.own
	return func(name string) bool { return !isReader(name) && name != own }
}

// isReader reports whether the node called name is a reader's: ours and
// Curator's carry readSep right before the sequence number, kazoo's
// "__rlock__". Every other contender (the writers of the three clients,
// the plain mutexes of this module) is taken as a writer, the safe guess.
func isReader(name string) bool {
	prefix := strings.TrimRight(name, "0123456789-") // the sequence, and its sign
	return strings.HasSuffix(prefix, readSep) || strings.HasSuffix(prefix, "__rlock__")
}

// acquire runs the recipe for this side, and keeps the hold on success.
func (s *Side) acquire(ctx context.Context, wait bool) error {
	m := s.m
	return s.slot.TakeIf(ctx, m.base.Log, func() error { return m.admitLocked(s) },
		func(n *lockq.Node) error {
			// A downgrade never waits: a writer it would wait for waits
			// for our write lock (see ErrDowngrade).
			downgrade := s.own != ""
			err := m.lock(ctx, s, n, wait && !downgrade)
			switch {
			case downgrade && errors.Is(err, zklocks.ErrLocked):
				return fmt.Errorf("%w: %w", ErrDowngrade, err)
			case downgrade && err == nil:
				return m.writeHoldLasted(ctx, s.own)
			}
			return err
		})
}

// admitLocked says whether side s may begin an acquisition, given the
// state of both sides, and notes a downgrade in s.own.
func (m *Mutex) admitLocked(s *Side) error {
	switch {
	case !s.slot.IdleLocked():
		return zklocks.ErrAlreadyLocked
	case !s.read && !m.r.slot.IdleLocked():
		return ErrUpgrade
	case s.read && m.w.slot.AcquiringLocked():
		// Our read node could land ahead of our write node, and the write
		// lock would then wait for our own reader.
		return zklocks.ErrAlreadyLocked
	case s.read && m.w.slot.LostLocked() != nil:
		// A downgrade promises that no writer got in since our write; a
		// lost write hold can not keep that promise.
		return fmt.Errorf("%w: %w", ErrDowngrade, m.w.slot.LostLocked())
	}
	s.own = ""
	if w := m.w.slot.HeldLocked(); s.read && w != nil {
		s.own = path.Base(w.Path())
	}
	return nil
}

// writeHoldLasted checks, after a downgrade's read node was made, that
// our write node (own) still exists: nodes never come back, so it then
// lived until our read node did, and no writer can have held in between.
// Our session reads its own writes, so the check sees every delete
// applied before our create. Without it, an Unlock racing the downgrade,
// or a write hold lost unnoticed, could let a writer in and out first.
func (m *Mutex) writeHoldLasted(ctx context.Context, own string) error {
	_, _, err := m.q.Client().Get(ctx, m.base.Path+"/"+own)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: the write hold ended before the read lock was taken", ErrDowngrade)
	case err != nil:
		return fmt.Errorf("check the write hold: %w", err)
	}
	return nil
}
