package rwlock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/lockq"
)

// Readers' names. Ours and Curator's carry "__READ__", kazoo's
// "__rlock__"; every other contender in the queue (writers of the three
// clients, and the plain mutexes of this module) is taken as a writer,
// which is the safe guess.
var readerMarks = []string{"__READ__", "__rlock__"}

// isReader reports whether the node called name is a reader's: its mark
// comes right before the sequence number.
func isReader(name string) bool {
	prefix := strings.TrimRight(name, "0123456789-") // the sequence, and its sign
	for _, mark := range readerMarks {
		if strings.HasSuffix(prefix, mark) {
			return true
		}
	}
	return false
}

// side is the reader or the writer of a Mutex: at most one node and one
// hold at a time, in its slot (guarded by the Mutex's mu).
type side struct {
	m    *Mutex
	read bool
	slot *lockq.Slot
	// own is the name of our writer's node while it held the lock when
	// this reader began: a reader does not wait for it (a downgrade).
	own string
}

// sep is the separator of this side's node names.
func (s *side) sep() string {
	if s.read {
		return lockq.ReadSep
	}
	return lockq.WriteSep
}

// blocks picks the nodes ahead of ours that keep this side waiting: for
// a writer every node (nil), for a reader the writers other than our own.
func (s *side) blocks() func(name string) bool {
	if !s.read {
		return nil
	}
	own := s.own
	return func(name string) bool { return !isReader(name) && name != own }
}

// acquire runs the recipe for this side, and keeps the hold on success.
func (s *side) acquire(ctx context.Context, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m := s.m
	n := lockq.NewNode(m.base.Log)
	if err := m.begin(s, n); err != nil {
		return err
	}
	downgrade := s.own != ""
	return s.slot.Acquire(ctx, n, m.base.Log, zklocks.ErrLocked, func() error {
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

// release deletes this side's node after a hold.
func (s *side) release(ctx context.Context) error { return s.slot.Unlock(ctx, zklocks.ErrNotLocked) }
