package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zklocks/zklocks"
)

// HoldCostResult is what holding Held locks idle, all on one session,
// costs while nothing else happens: the price of a lock per shard or per
// tenant on one connection.
type HoldCostResult struct {
	Variant string
	Held    int
	Idle    time.Duration // the window measured
	// PacketsPerSec is what the servers received from every client in
	// the window (mntr, all members), per second: the session's pings,
	// the keeper's syncs, and whatever the held locks send.
	PacketsPerSec float64
	// CPUPerSec is this process's CPU time (user and system) per second
	// of the window: the client side, go-zookeeper included.
	CPUPerSec time.Duration
	// Goroutines is how many goroutines the held locks added, and
	// HeapPerLock the live heap each held lock added, in bytes (both
	// measured after a GC, against the session alone). For a peer run by
	// a driver (Driver) they are the driver process's threads and
	// resident memory instead, and CPUPerSec is that process's CPU.
	Goroutines  int
	HeapPerLock float64
	Driver      bool
	// Lost counts the held locks whose Done closed during the window: a
	// hold that could not be kept up (a lease that lapsed under load).
	// -1 for a driver's peer, which does not tell.
	Lost int
}

// holdParallel bounds the Locks and Unlocks in flight while the locks are
// taken and given back (not measured).
const holdParallel = 64

// MeasureHoldCost takes n locks of v, each on a path of its own, on one
// session, holds them idle for idle, and measures what that window cost.
// It leaves nothing on the ensemble.
func MeasureHoldCost(ctx context.Context, servers []string, v Variant, n int, idle time.Duration) (HoldCostResult, error) {
	res := HoldCostResult{Variant: v.Name, Held: n, Idle: idle}
	if n < 0 || idle <= 0 {
		return res, errors.New("bench: hold cost needs n >= 0 and a positive idle window")
	}
	if v.New == nil {
		if v.Driver == nil || v.Driver.Hold == nil {
			return res, fmt.Errorf("bench: %s has no hold mode", v.Name)
		}
		return measureDriverHoldCost(ctx, servers, v, n, idle)
	}
	ss, err := connectAll(ctx, servers, 1)
	if err != nil {
		return res, err
	}
	defer closeAll(ss)
	s := ss[0]
	dir, err := makeRunDir(s.conn(), v.Name+"-hold")
	if err != nil {
		return res, err
	}
	defer deleteTree(s.conn(), dir)

	g0, h0 := liveCounts()
	locks, err := holdAll(ctx, v, s.zs, dir, n)
	defer releaseAll(ctx, v, locks)
	if err != nil {
		return res, err
	}
	g1, h1 := liveCounts()
	res.Goroutines = g1 - g0
	if n > 0 {
		res.HeapPerLock = float64(h1-h0) / float64(n) // may be below 0: a GC's noise on a small n
	}

	if err := measureIdle(ctx, servers, idle, func() (time.Duration, error) { return processCPU(), nil }, &res); err != nil {
		return res, err
	}
	for _, l := range locks {
		select {
		case <-l.Done():
			res.Lost++
		default:
		}
	}
	return res, nil
}

// holdAll makes n locks of v under dir on s and takes each.
func holdAll(ctx context.Context, v Variant, s *zklocks.Session, dir string, n int) ([]zklocks.Locker, error) {
	locks := make([]zklocks.Locker, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(holdParallel)
	for i := range locks {
		l, err := v.New(s, fmt.Sprintf("%s/l%d", dir, i))
		if err != nil {
			return locks, errors.Join(err, g.Wait()) // the Locks started are released by the caller
		}
		locks[i] = l
		g.Go(func() error {
			lctx := gctx
			if v.Context != nil {
				lctx = v.Context(gctx, i)
			}
			if err := l.Lock(lctx); err != nil {
				return fmt.Errorf("bench: %s Lock %d of %d: %w", v.Name, i+1, n, err)
			}
			return nil
		})
	}
	return locks, g.Wait()
}

// releaseAll unlocks every lock; a lock that was never taken answers
// ErrNotLocked, which is ignored.
func releaseAll(ctx context.Context, v Variant, locks []zklocks.Locker) {
	var g errgroup.Group
	g.SetLimit(holdParallel)
	for i, l := range locks {
		if l == nil {
			continue
		}
		g.Go(func() error {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SessionTimeout)
			defer cancel()
			if v.Context != nil {
				uctx = v.Context(uctx, i)
			}
			_ = l.Unlock(uctx)
			return nil
		})
	}
	_ = g.Wait()
}

// liveCounts returns the goroutines and the live heap after a GC.
func liveCounts() (goroutines int, heap int64) {
	runtime.GC()
	runtime.GC() // the first one's finalizers and clean-ups run before the second
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), int64(ms.HeapAlloc)
}

// measureIdle waits idle, once the servers have settled, and fills res's
// window, the packets the servers received in it and the CPU cpu counted
// in it, per second.
func measureIdle(ctx context.Context, servers []string, idle time.Duration, cpu func() (time.Duration, error), res *HoldCostResult) error {
	settle(ctx, servers)
	before, err := takeSnapshot(servers)
	if err != nil {
		return err
	}
	cpu0, err := cpu()
	if err != nil {
		return err
	}
	t0 := time.Now()
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return ctx.Err()
	}
	cpu1, err := cpu()
	if err != nil {
		return err
	}
	window := time.Since(t0)
	after, err := takeSnapshot(servers)
	if err != nil {
		return err
	}
	counts, err := diff(before, after)
	if err != nil {
		return err
	}
	res.Idle = window
	res.PacketsPerSec = float64(counts.PacketsReceived) / window.Seconds()
	res.CPUPerSec = time.Duration(float64(cpu1-cpu0) / window.Seconds())
	return nil
}
