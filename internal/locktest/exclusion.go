package locktest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/zktest"
)

// contend runs one goroutine per locker; each takes the lock rounds times,
// records every hold in rec and runs work(ctx, i) inside it. The first
// error stops everyone.
func contend(ctx context.Context, lockers []zklocks.Locker, rounds int, rec *history.Recorder,
	work func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	for i, l := range lockers {
		g.Go(func() error {
			name := fmt.Sprintf("c%02d", i)
			for r := range rounds {
				if err := l.Lock(ctx); err != nil {
					return fmt.Errorf("%s round %d: Lock: %w", name, r, err)
				}
				exit := rec.Enter(name, l.Token())
				werr := work(ctx, i)
				exit()
				if err := l.Unlock(ctx); err != nil {
					return fmt.Errorf("%s round %d: Unlock: %w", name, r, err)
				}
				if werr != nil {
					return fmt.Errorf("%s round %d: %w", name, r, werr)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// testMutualExclusion: N contenders on separate sessions take the lock in
// turns; the recorded history must have no overlap and growing tokens.
func (s *suite) testMutualExclusion(t T) {
	for _, tc := range []struct{ contenders, rounds int }{{2, 10}, {8, 4}, {32, 2}} {
		t.Run(fmt.Sprintf("N=%d", tc.contenders), func(t T) {
			ctx := testContext(t, 60*time.Second)
			path := zktest.LockPath(t)
			clients := make([]client, tc.contenders)
			lockers := make([]zklocks.Locker, tc.contenders)
			for i := range clients {
				clients[i] = s.newClient(t, path, 0)
				lockers[i] = clients[i].l
			}
			// Inside the critical section: check the hold looks held and
			// make one round trip, so that a broken lock has time to let
			// a second holder in.
			work := func(ctx context.Context, i int) error {
				c := clients[i]
				if c.l.Token() <= 0 {
					return fmt.Errorf("Token() = %d while held", c.l.Token())
				}
				if IsClosed(c.l.Done()) {
					return fmt.Errorf("Done() closed while held")
				}
				_, _, err := c.conn.Exists(path)
				return err
			}
			rec := history.NewRecorder()
			start := time.Now()
			if err := contend(ctx, lockers, tc.rounds, rec, work); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			h := rec.History()
			if want := tc.contenders * tc.rounds; len(h) != want {
				t.Fatalf("recorded %d holds, want %d", len(h), want)
			}
			if err := history.Check(h); err != nil {
				t.Fatalf("history of %d holds: %v", len(h), err)
			}
			t.Logf("%d holds by %d contenders in %v (%v per hold)", len(h), tc.contenders,
				took.Round(time.Millisecond), (took / time.Duration(len(h))).Round(time.Microsecond))
			for _, c := range clients {
				s.requireNoNodes(t, clients[0].conn, path, c, "the last Unlock")
			}
		})
	}
}

// testFIFO: contenders that queue one after another acquire in that order.
func (s *suite) testFIFO(t T) {
	if !s.v.FIFO {
		t.Skipf("%s does not promise FIFO order", s.v.Name)
	}
	const waiters = 5
	ctx := testContext(t, 30*time.Second)
	path := zktest.LockPath(t)
	holder := s.newClient(t, path, 0)
	mustLock(t, ctx, "holder", holder.l)

	var mu sync.Mutex
	var order []int
	g, gctx := errgroup.WithContext(ctx)
	for i := range waiters {
		c := s.newClient(t, path, 0)
		g.Go(func() error {
			if err := c.l.Lock(gctx); err != nil {
				return fmt.Errorf("waiter %d: Lock: %w", i, err)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			return c.l.Unlock(gctx)
		})
		if !s.waitQueued(t, ctx, holder.conn, path, c, 0, nil) {
			t.Skip("queueing can not be observed for this variant")
		}
	}
	mustUnlock(t, ctx, "holder", holder.l)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(order, want) {
		t.Fatalf("acquisition order %v, want the queue order %v", order, want)
	}
}
