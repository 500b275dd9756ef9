package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// CeilingSessions are the numbers of sessions tried, in order.
var CeilingSessions = []int{4, 16, 64, 256}

// CeilingWindow is the number of requests each session keeps outstanding.
const CeilingWindow = 8

// CeilingGrowth is the least relative rise of writes/s for which the
// next, larger step is worth measuring.
const CeilingGrowth = 0.05

// Ceiling is the ensemble's quorum-write ceiling: what it can do at
// all, measured in the same run as the locks so that "fraction of the
// ceiling" cancels the machine's speed. Every lock acquisition costs quorum writes (a queue
// lock two: its create and its delete), and every quorum write goes
// through the leader's one pipeline (propose, log with fsync, collect a
// quorum of acknowledgements, commit), so writes per second is the
// ensemble's limit, whatever the lock. One lock cannot reach it: its
// acquisitions are serialized by the handoff (release, notification, the
// next holder's reply), so a single lock is bounded by handoff latency;
// many independent locks together are bounded by the ceiling.
//
// How it is measured: CeilingSessions sessions (spread round-robin over
// the members, as the contenders are) each keep CeilingWindow requests
// outstanding, from as many goroutines each looping create then delete of
// a node of its own (go-zookeeper pipelines a session's concurrent
// requests on its one connection). The writes are counted where they are
// agreed on, at the leader's zk_proposal_count over the window, read with
// mntr after every session is open and before any is closed, so sessions'
// creates and closes are not counted. The steps grow the sessions (4, 16,
// 64, 256) and stop as soon as a step adds less than CeilingGrowth: the
// ensemble is saturated. The ceiling is the best step; when the last
// step still rose, it is a lower bound (Saturated is false). With a local
// ensemble the bench's own process shares the machine's cores with the
// servers, as it does during the lock runs: the ceiling is this machine's,
// client included, the same bound the locks run against.
type Ceiling struct {
	// WritesPerSec is the best step's: the leader's proposals over the
	// step's window.
	WritesPerSec float64
	// Sessions is the best step's number of sessions; Window the requests
	// each kept outstanding.
	Sessions, Window int
	// Saturated is true when a step added less than CeilingGrowth, false
	// when the last step still rose (the ceiling is then a lower bound).
	Saturated bool
	// Steps are the steps measured, in order.
	Steps []CeilingStep
}

// CeilingStep is one step of the measurement.
type CeilingStep struct {
	Sessions int
	// Proposals is the leader's zk_proposal_count delta over Elapsed;
	// Completed the create and delete requests the clients saw succeed.
	Proposals, Completed int64
	Elapsed              time.Duration
}

// WritesPerSec is the step's proposals per second.
func (s CeilingStep) WritesPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Proposals) / s.Elapsed.Seconds()
}

// saturated reports whether a step at cur writes/s rose less than
// CeilingGrowth over the step before it, at prev.
func saturated(prev, cur float64) bool { return cur < prev*(1+CeilingGrowth) }

// add appends a step and keeps the best one as the ceiling.
func (c *Ceiling) add(s CeilingStep) {
	c.Steps = append(c.Steps, s)
	if w := s.WritesPerSec(); w > c.WritesPerSec {
		c.WritesPerSec, c.Sessions = w, s.Sessions
	}
}

// Fraction is the share of the ceiling a lock taking acqPerSec
// acquisitions per second at writesPerAcq quorum writes each uses; NaN
// when any of them is unknown.
func (c *Ceiling) Fraction(acqPerSec, writesPerAcq float64) float64 {
	if c == nil || c.WritesPerSec <= 0 || acqPerSec <= 0 || writesPerAcq <= 0 {
		return math.NaN()
	}
	return acqPerSec * writesPerAcq / c.WritesPerSec
}

// FractionOf is Fraction for a run: its median acq/s over the rounds
// times its writes per acquisition.
func (c *Ceiling) FractionOf(r Result) float64 {
	return c.Fraction(r.Estimate(FigThroughput).Median, r.WritesPerAcquisition())
}

// fractionStr prints a fraction of the ceiling, "0.42", or "-".
func fractionStr(x float64) string {
	if math.IsNaN(x) || x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// MeasureCeiling measures the quorum-write ceiling with a window of
// window per step.
func MeasureCeiling(ctx context.Context, servers []string, window time.Duration) (Ceiling, error) {
	c := Ceiling{Window: CeilingWindow}
	for i, n := range CeilingSessions {
		s, err := ceilingStep(ctx, servers, n, window)
		if err != nil {
			return c, err
		}
		prev := c.WritesPerSec
		c.add(s)
		if i > 0 && saturated(prev, s.WritesPerSec()) {
			c.Saturated = true
			break
		}
	}
	return c, nil
}

// ceilingStep runs one step: n sessions of CeilingWindow create+delete
// loops each, for window.
func ceilingStep(ctx context.Context, servers []string, n int, window time.Duration) (CeilingStep, error) {
	step := CeilingStep{Sessions: n}
	ss, err := connectAll(ctx, servers, n)
	if err != nil {
		return step, err
	}
	defer closeAll(ss)
	root, err := makeRunDir(ss[0].conn(), fmt.Sprintf("ceiling-%d", n))
	if err != nil {
		return step, err
	}
	defer deleteTree(ss[0].conn(), root)
	settle(ctx, servers)
	before, err := takeSnapshot(servers)
	if err != nil {
		return step, err
	}
	var completed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	acl := zk.WorldACL(zk.PermAll)
	t0 := time.Now()
	deadline := t0.Add(window)
	for i, s := range ss {
		for j := range CeilingWindow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, node := s.conn(), fmt.Sprintf("%s/s%d-%d", root, i, j)
				for time.Now().Before(deadline) && ctx.Err() == nil {
					_, err := conn.Create(node, nil, 0, acl)
					if err == nil {
						completed.Add(1)
						err = conn.Delete(node, -1)
					}
					if err != nil {
						errOnce.Do(func() { firstErr = fmt.Errorf("bench: ceiling with %d sessions: %w", n, err) })
						return
					}
					completed.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	step.Elapsed = time.Since(t0)
	if firstErr != nil {
		return step, firstErr
	}
	if err := ctx.Err(); err != nil {
		return step, err
	}
	after, err := takeSnapshot(servers)
	if err != nil {
		return step, err
	}
	d, err := diff(before, after)
	if err != nil {
		return step, err
	}
	step.Proposals, step.Completed = d.Proposals, completed.Load()
	return step, nil
}

// withCeiling returns cols with the fraction of the ceiling after acq/s,
// when the report has a ceiling: "of ceiling" in the files' tables, "ceil"
// in the terminal's summary (SummaryWidth).
func (r *Report) withCeiling(cols []column, head string) []column {
	if r.Ceiling == nil {
		return cols
	}
	var out []column
	for _, c := range cols {
		out = append(out, c)
		if c.head == "acq/s [95% CI]" {
			out = append(out, column{head, func(x Result) string { return fractionStr(r.Ceiling.FractionOf(x)) }})
		}
	}
	return out
}

// ceilingSentence says what the ceiling is and where the lock at n
// stands against it, for the headline.
func (c *Ceiling) sentence(seq Result, haveSeq bool) string {
	if c == nil || c.WritesPerSec <= 0 {
		return ""
	}
	s := fmt.Sprintf("The ensemble's quorum-write ceiling is %s%.0f writes/s (%d sessions, %d requests outstanding each, pipelining create+delete; the leader's zk_proposal_count)",
		c.atLeast(), c.WritesPerSec, c.Sessions, c.Window)
	if haveSeq {
		s += fmt.Sprintf("; sequential at N=%d, %s acq/s x %.2f writes/acq, uses %s of it",
			seq.Contenders, sig3(seq.Estimate(FigThroughput).Median), seq.WritesPerAcquisition(), fractionStr(c.FractionOf(seq)))
	}
	return s + ": a single lock is bounded by handoff latency, many locks by the write ceiling"
}

// atLeast is "at least " when the ceiling is a lower bound.
func (c *Ceiling) atLeast() string {
	if c.Saturated {
		return ""
	}
	return "at least "
}

// writeCeiling writes the ceiling's steps.
func (r *Report) writeCeiling(w io.Writer, md bool) {
	c := r.Ceiling
	if c == nil {
		return
	}
	if md {
		fmt.Fprintf(w, "| sessions | requests outstanding each | window s | leader's proposals | client writes | writes/s |\n|---:|---:|---:|---:|---:|---:|\n")
	} else {
		fmt.Fprintf(w, "quorum-write ceiling: %s%.0f writes/s (%d sessions); steps (sessions x %d outstanding: writes/s):", c.atLeast(), c.WritesPerSec, c.Sessions, c.Window)
	}
	for _, s := range c.Steps {
		if md {
			fmt.Fprintf(w, "| %d | %d | %.2f | %d | %d | %.0f |\n", s.Sessions, c.Window, s.Elapsed.Seconds(), s.Proposals, s.Completed, s.WritesPerSec())
		} else {
			fmt.Fprintf(w, "  %d: %.0f", s.Sessions, s.WritesPerSec())
		}
	}
	if !md {
		fmt.Fprintln(w)
	}
}
