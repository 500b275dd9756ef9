package rivals

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks/internal/history"
)

// lockName gives each test its own lock, so that a test never waits on
// a hold another one left behind.
func lockName(t *testing.T) string { return t.Name() }

// TestMutualExclusion lets several clients take one lock in turns and
// checks from the recorded holds that no two overlapped, and, where the
// system has a fencing token, that each hold's token is larger than every
// earlier one's.
func TestMutualExclusion(t *testing.T) {
	const contenders, rounds = 4, 12
	for _, s := range systems() {
		t.Run(string(s.name), func(t *testing.T) {
			verifyNoLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rec := history.NewRecorder()
			g, gctx := errgroup.WithContext(ctx)
			for i := range contenders {
				l := s.open(t, lockName(t), Options{})
				g.Go(func() error {
					for range rounds {
						if err := l.Lock(gctx); err != nil {
							return err
						}
						exit := rec.Enter(fmt.Sprintf("client %d", i), l.Token())
						// A critical section long enough for the others to
						// be waiting when it ends.
						time.Sleep(time.Millisecond)
						exit()
						if err := l.Unlock(gctx); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			h := rec.History()
			if len(h) != contenders*rounds {
				t.Fatalf("%d holds recorded, want %d", len(h), contenders*rounds)
			}
			if s.fenced {
				if err := history.Check(h); err != nil {
					t.Fatal(err)
				}
			} else {
				if n := history.Overlaps(h); n != 0 {
					t.Fatalf("%d holds began while another was held", n)
				}
				for _, x := range h {
					if x.Token != 0 {
						t.Fatalf("%v: a token from a system that offers none", x)
					}
				}
			}
		})
	}
}

// TestUnlockNotHeld: Unlock without a hold, and a second Unlock, fail
// with ErrNotHeld; a second Lock of the same Locker fails with ErrHeld.
func TestUnlockNotHeld(t *testing.T) {
	for _, s := range systems() {
		t.Run(string(s.name), func(t *testing.T) {
			verifyNoLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l := s.open(t, lockName(t), Options{})
			if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock before any Lock: %v, want ErrNotHeld", err)
			}
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if s.fenced && l.Token() <= 0 {
				t.Errorf("Token %d while held", l.Token())
			}
			if err := l.Lock(ctx); !errors.Is(err, ErrHeld) {
				t.Fatalf("second Lock: %v, want ErrHeld", err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if l.Token() != 0 {
				t.Errorf("Token %d after Unlock", l.Token())
			}
			if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("second Unlock: %v, want ErrNotHeld", err)
			}
		})
	}
}

// TestCancelWhileWaiting: a waiter whose context ends returns at once
// with an error wrapping the context's, and leaves nothing behind: once
// the holder releases, a third client gets the lock without waiting.
func TestCancelWhileWaiting(t *testing.T) {
	// promptly bounds how long after its context ends a waiter returns:
	// a poller's pause, PostgreSQL's cancel request, a loaded machine.
	const promptly = time.Second
	for _, s := range systems() {
		t.Run(string(s.name), func(t *testing.T) {
			verifyNoLeaks(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			holder := s.open(t, lockName(t), Options{})
			if err := holder.Lock(ctx); err != nil {
				t.Fatal(err)
			}

			waiter := s.open(t, lockName(t), Options{})
			wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			err := waiter.Lock(wctx)
			late := time.Since(deadlineOf(wctx))
			wcancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Lock past its deadline: %v, want an error wrapping context.DeadlineExceeded", err)
			}
			if late > promptly {
				t.Errorf("Lock returned %v after its deadline", late)
			}

			cctx, ccancel := context.WithCancel(ctx)
			stop := time.AfterFunc(100*time.Millisecond, ccancel)
			err = waiter.Lock(cctx)
			stop.Stop()
			ccancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Lock cancelled: %v, want an error wrapping context.Canceled", err)
			}
			if err := waiter.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock after a cancelled Lock: %v, want ErrNotHeld", err)
			}

			if err := holder.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			third := s.open(t, lockName(t), Options{})
			start := time.Now()
			if err := third.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > promptly {
				t.Errorf("a free lock took %v to take: the cancelled waiter left something behind", d)
			}
			if err := third.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
