package rwlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/lockq"
	"github.com/zklocks/zklocks/internal/oplog"
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

// state is where a side is in its cycle.
type state int

const (
	idle      state = iota // no node
	acquiring              // inside Lock or TryLock
	held                   // Lock or TryLock succeeded; Unlock not called yet
)

// side is the reader or the writer of a Mutex: at most one node and one
// hold at a time. Its fields are guarded by the Mutex's mu.
type side struct {
	m     *Mutex
	read  bool
	state state       // of this side
	cur   *lockq.Node // the acquisition under way or the hold, nil when idle
	log   *oplog.Hold // the hold's operation log, nil when off
	lost  error       // why the last hold ended, if it was lost
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
	n := lockq.NewNode(m.opts.log)
	if err := m.begin(s, n); err != nil {
		return err
	}
	start := m.opts.log.Now()
	downgrade := s.own != ""
	err := m.lock(ctx, s, n, wait && !downgrade)
	if downgrade && errors.Is(err, ErrLocked) {
		err = fmt.Errorf("%w: %w", ErrDowngrade, err)
	}
	if downgrade && err == nil {
		err = m.writeHoldLasted(ctx, s.own)
	}
	if err != nil {
		m.q.Abandon(ctx, n)
		if m.opts.log != nil && !errors.Is(err, ErrLocked) {
			m.opts.log.Abandon(ctx, n.Path(), start, err)
		}
		m.mu.Lock()
		s.state, s.cur = idle, nil
		m.mu.Unlock()
		return err
	}
	n.Monitor().Acquired()
	hl := s.logAcquire(ctx, n, start)
	m.mu.Lock()
	s.state, s.lost, s.log = held, nil, hl
	m.mu.Unlock()
	return nil
}

// writeHoldLasted checks, after a downgrade's read node was made, that
// our write node (own) still exists: nodes never come back, so it then
// lived until our read node did, and no writer can have held in between.
// Our session reads its own writes, so the check sees every delete
// applied before our create. Without it, an Unlock racing the downgrade,
// or a write hold lost unnoticed, could let a writer in and out first.
func (m *Mutex) writeHoldLasted(ctx context.Context, own string) error {
	_, _, err := m.q.Client().Get(ctx, m.path+"/"+own)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: the write hold ended before the read lock was taken", ErrDowngrade)
	case err != nil:
		return fmt.Errorf("check the write hold: %w", err)
	}
	return nil
}

// logAcquire writes the acquire event and has the monitor log a loss as
// soon as it sees one.
func (s *side) logAcquire(ctx context.Context, n *lockq.Node, start time.Time) *oplog.Hold {
	m := s.m
	if m.opts.log == nil {
		return nil
	}
	h := m.opts.log.Acquire(ctx, n.Path(), n.Token(), m.q.Client().Conn.SessionID(), start)
	n.Monitor().OnLoss(func(reason error) { h.Lost(context.Background(), reason) })
	return h
}

// release deletes this side's node after a hold.
func (s *side) release(ctx context.Context) error {
	m := s.m
	m.mu.Lock()
	if s.state != held {
		m.mu.Unlock()
		return ErrNotLocked
	}
	n, hl := s.cur, s.log
	s.state, s.cur, s.log = idle, nil, nil
	m.mu.Unlock()

	err := m.q.Release(ctx, n)
	if errors.Is(err, ErrLockLost) {
		hl.Lost(ctx, err) // once: the monitor may have written it already
		m.mu.Lock()
		s.lost = err
		m.mu.Unlock()
		return err
	}
	hl.Release(ctx, err)
	return err
}

func (s *side) token() int64 {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.state != held {
		return 0
	}
	return s.cur.Token()
}

func (s *side) done() <-chan struct{} {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.state != held {
		return closed
	}
	return s.cur.Monitor().Done()
}

func (s *side) err() error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.state == held {
		if err := s.cur.Monitor().Err(); err != nil && !errors.Is(err, hold.ErrReleased) {
			return lostError(err)
		}
		return nil
	}
	return s.lost
}

func (s *side) node() string {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
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
