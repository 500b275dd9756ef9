package locktest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
)

// memLock is an in-process Locker for testing the harness without
// ZooKeeper. With broken set, Lock never waits: every caller "holds" it.
type memLock struct {
	mu     *sync.Mutex
	next   *atomic.Int64
	broken bool
	token  atomic.Int64
}

func (m *memLock) Lock(ctx context.Context) error {
	if !m.broken {
		m.mu.Lock()
	}
	m.token.Store(m.next.Add(1))
	return nil
}
func (m *memLock) TryLock(ctx context.Context) error { return m.Lock(ctx) }
func (m *memLock) Unlock(ctx context.Context) error {
	m.token.Store(0)
	if !m.broken {
		m.mu.Unlock()
	}
	return nil
}
func (m *memLock) Token() int64 { return m.token.Load() }
func (m *memLock) Done() <-chan struct{} {
	return nil
}

func memLockers(n int, broken bool) []zklocks.Locker {
	var mu sync.Mutex
	var next atomic.Int64
	out := make([]zklocks.Locker, n)
	for i := range out {
		out[i] = &memLock{mu: &mu, next: &next, broken: broken}
	}
	return out
}

// The harness passes a correct lock and catches a broken one: with the
// broken lock every contender is made to be inside at once, so the check
// must report an overlap.
func TestContendCatchesBrokenLock(t *testing.T) {
	const n = 8
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	rec := history.NewRecorder()
	if err := contend(ctx, memLockers(n, false), 20, rec, func(context.Context, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := history.Check(rec.History()); err != nil {
		t.Fatalf("a correct lock's history: %v", err)
	}

	var inside sync.WaitGroup
	inside.Add(n)
	all := make(chan struct{})
	go func() { inside.Wait(); close(all) }()
	rendezvous := func(ctx context.Context, _ int) error {
		inside.Done()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	rec = history.NewRecorder()
	if err := contend(ctx, memLockers(n, true), 1, rec, rendezvous); err != nil {
		t.Fatal(err)
	}
	err := history.Check(rec.History())
	if !errors.Is(err, history.ErrOverlap) {
		t.Fatalf("a broken lock's history: Check = %v, want %v", err, history.ErrOverlap)
	}
	t.Logf("broken lock caught: %v", err)
}
