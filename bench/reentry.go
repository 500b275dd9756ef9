package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReentryResult is the cost of re-entering a held lock: one more Lock and
// its Unlock by the owner that already holds it.
type ReentryResult struct {
	Variant   string
	Reentries int
	// Latency is the time of one nested Lock+Unlock pair.
	Latency Latency
	// Server is what the servers counted over all the re-entries.
	Server ServerCounts
}

// WritesPerReentry is the quorum writes one nested Lock+Unlock pair costs.
func (r ReentryResult) WritesPerReentry() float64 {
	if r.Reentries == 0 {
		return 0
	}
	return float64(r.Server.Proposals) / float64(r.Reentries)
}

// MeasureReentry takes v's lock once, then re-enters it k times (a nested
// Lock and Unlock each, through v.Reenter), reading the servers' counters
// around the re-entries only.
func MeasureReentry(ctx context.Context, servers []string, v Variant, k int) (ReentryResult, error) {
	res := ReentryResult{Variant: v.Name, Reentries: k}
	if v.Reenter == nil {
		return res, fmt.Errorf("bench: %s is not re-entrant", v.Name)
	}
	if k <= 0 {
		return res, errors.New("bench: no re-entries asked")
	}
	ss, err := connectAll(ctx, servers, 1)
	if err != nil {
		return res, err
	}
	defer closeAll(ss)
	conn := ss[0].conn()
	dir, err := makeRunDir(conn, v.Name+"-reentry")
	if err != nil {
		return res, err
	}
	defer deleteTree(conn, dir)
	l, err := v.New(ss[0].zs, dir+"/lock")
	if err != nil {
		return res, err
	}
	if v.Context != nil {
		ctx = v.Context(ctx, 0)
	}
	if err := l.Lock(ctx); err != nil {
		return res, fmt.Errorf("bench: %s Lock: %w", v.Name, err)
	}
	defer l.Unlock(context.WithoutCancel(ctx))

	settle(ctx, servers)
	before, err := takeSnapshot(servers)
	if err != nil {
		return res, err
	}
	h := newHistogram()
	for range k {
		t0 := time.Now()
		if err := v.Reenter(ctx, l); err != nil {
			return res, fmt.Errorf("bench: %s re-entry: %w", v.Name, err)
		}
		h.record(time.Since(t0))
	}
	settle(ctx, servers)
	after, err := takeSnapshot(servers)
	if err != nil {
		return res, err
	}
	res.Latency = h.summary()
	res.Server, err = diff(before, after)
	return res, err
}
