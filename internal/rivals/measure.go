package rivals

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks/bench"
	"github.com/zklocks/zklocks/internal/history"
)

// ErrOverlap is RunRound's error when two holds overlapped: the lock let
// two holders in at once.
var ErrOverlap = history.ErrOverlap

// RoundConfig shapes one round of RunRound.
type RoundConfig struct {
	// Duration is how long contenders keep asking for the lock.
	Duration time.Duration
	// Hold is the critical section: how long a holder keeps the lock.
	Hold time.Duration
	// Idle is how long a contender waits after its release before it asks
	// again. With none, a releaser of a lock whose waiters poll (Redis,
	// Redlock) often takes the lock straight back, and the handoffs
	// counted are the few a poller won.
	Idle time.Duration
}

// RunRound lets every Locker (one per contender, all for one lock) take
// the lock in turns, and measures the round as the ZooKeeper bench does
// (bench.RoundFigures): acquisitions and elapsed time, the acquire
// latency (Lock called to Lock returned) and the handoff latency (just
// before a holder calls Unlock to just after the next holder's Lock
// returns, counted only for a Lock already waiting when the release
// began, so one contender has none). Contenders stop asking once
// cfg.Duration has passed; a Lock already waiting then still gets its
// turn.
//
// The round's holds are recorded, and a round in which two overlapped
// fails with an error wrapping ErrOverlap.
func RunRound(ctx context.Context, lockers []Locker, cfg RoundConfig) (Round, error) {
	var (
		mu        sync.Mutex
		released  time.Time // when the last holder was about to call Unlock
		acquired  int64
		perHolder = make([]int64, len(lockers))
		acquire   = newLatencies()
		handoff   = newLatencies()
		rec       = history.NewRecorder()
		start     = time.Now()
		deadline  = start.Add(cfg.Duration)
		g, gctx   = errgroup.WithContext(ctx)
		finished  time.Time
	)
	for i, l := range lockers {
		g.Go(func() error {
			for time.Now().Before(deadline) {
				called := time.Now()
				if err := l.Lock(gctx); err != nil {
					return fmt.Errorf("contender %d: %w", i, err)
				}
				got := time.Now()
				exit := rec.Enter(fmt.Sprint("contender ", i), l.Token())
				mu.Lock()
				acquired++
				perHolder[i]++
				acquire.record(got.Sub(called))
				if called.Before(released) {
					handoff.record(got.Sub(released))
				}
				mu.Unlock()
				if cfg.Hold > 0 {
					time.Sleep(cfg.Hold) // the critical section's work
				}
				exit()
				mu.Lock()
				released = time.Now()
				mu.Unlock()
				if err := l.Unlock(gctx); err != nil {
					return fmt.Errorf("contender %d: %w", i, err)
				}
				if cfg.Idle > 0 {
					time.Sleep(cfg.Idle) // work outside the critical section
				}
			}
			mu.Lock()
			finished = time.Now()
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Round{}, err
	}
	if n := history.Overlaps(rec.History()); n > 0 {
		return Round{}, fmt.Errorf("rivals: %d of %d holds began while another was held: %w",
			n, acquired, ErrOverlap)
	}
	r := Round{RoundFigures: bench.RoundFigures{
		Acquisitions: acquired,
		Elapsed:      finished.Sub(start),
		AcquireP50:   acquire.quantile(50),
		HandoffP50:   handoff.quantile(50),
		HandoffP99:   handoff.quantile(99),
	}}
	if acquired > 0 {
		r.TopShare = float64(slices.Max(perHolder)) / float64(acquired)
	}
	return r, nil
}

// Round is what RunRound measured.
type Round struct {
	bench.RoundFigures
	// TopShare is the largest part of the round's acquisitions that one
	// contender made: 1/N when the lock serves its waiters in turn, near 1
	// when a releaser that asks again at once takes the lock straight
	// back while the others poll (Redis, Redlock).
	TopShare float64
}

// latencies is an HDR histogram from 1 µs to 2 minutes, three digits.
type latencies struct{ h *hdrhistogram.Histogram }

func newLatencies() latencies {
	return latencies{hdrhistogram.New(int64(time.Microsecond), int64(2*time.Minute), 3)}
}

func (l latencies) record(d time.Duration) {
	_ = l.h.RecordValue(int64(max(time.Microsecond, min(d, 2*time.Minute))))
}

// quantile is 0 when nothing was recorded (RoundFigures's "none").
func (l latencies) quantile(q float64) time.Duration {
	if l.h.TotalCount() == 0 {
		return 0
	}
	return time.Duration(l.h.ValueAtQuantile(q))
}
