package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	zkl "github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/rivals"
	"github.com/zklocks/zklocks/sequential"
)

// systemZK is ZooKeeper itself in the rivals' run: the sequential lock on
// a three-member ensemble of its own (fsync on, as the others' durability
// is), measured by the same rounds as the rivals, so that every ratio
// between ZooKeeper and a rival comes from one run.
const systemZK rivals.System = "zookeeper"

// zkSessionTimeout is the session the ZooKeeper contenders ask for; like
// the rivals' TTL, it only matters when a holder dies.
const zkSessionTimeout = 10 * time.Second

// zkLock is a sequential.Mutex on a session of its own, as a rivals.Locker.
type zkLock struct {
	s *zkl.Session
	m *sequential.Mutex
}

func newZKLock(ctx context.Context, servers []string, lock string) (*zkLock, error) {
	s, err := connect(ctx, servers, zkSessionTimeout)
	if err != nil {
		return nil, err
	}
	m, err := sequential.New(s, "/rivals/"+lock)
	if err != nil {
		s.Close()
		return nil, err
	}
	return &zkLock{s: s, m: m}, nil
}

func (l *zkLock) Lock(ctx context.Context) error { return l.m.Lock(ctx) }
func (l *zkLock) Token() int64                   { return l.m.Token() }
func (l *zkLock) Close() error                   { l.s.Close(); return nil }

func (l *zkLock) Unlock(ctx context.Context) error {
	err := l.m.Unlock(ctx)
	if errors.Is(err, zkl.ErrNotLocked) {
		return fmt.Errorf("%w: %w", rivals.ErrNotHeld, err)
	}
	return err
}

// startZK starts the ensemble of the ZooKeeper row.
func startZK(ctx context.Context) (*ensemble.Ensemble, error) {
	return ensemble.Start(ctx, ensemble.DefaultConfig())
}

// zkProposals reads the leader's count of proposals: every quorum write
// the ensemble made, the durable writes of the ZooKeeper row.
func zkProposals(e *ensemble.Ensemble) (float64, error) {
	for _, addr := range e.Servers() {
		st, err := ensemble.ServerStatus(addr)
		if err != nil || st.Mode != "leader" {
			continue
		}
		m, err := ensemble.MntrAt(addr)
		if err != nil {
			return 0, err
		}
		n, err := m.Int("zk_proposal_count")
		return float64(n), err
	}
	return 0, errors.New("no member leads")
}
