package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zklocks/zklocks/bench"
)

// manyLocksVariants looks up -paths-variants and parses -paths, for the
// many-locks section (none when -paths is empty). A peer whose client is
// not installed is left out with a line, or fails the run when
// -paths-variants was given.
func manyLocksVariants(f benchFlags, stderr io.Writer) (vs []bench.Variant, ms []int, skipped []string, err error) {
	if strings.TrimSpace(f.paths) == "" {
		return nil, nil, nil, nil
	}
	if ms, err = parseCounts(f.paths, "-paths", 1); err != nil {
		return nil, nil, nil, err
	}
	if f.pathsN < 1 {
		return nil, nil, nil, usageError{"-paths-n: at least 1"}
	}
	for _, name := range splitNames(f.pathsVariants) {
		v, err := bench.Lookup(name)
		if err != nil {
			return nil, nil, nil, usageError{"-paths-variants: " + err.Error()}
		}
		if v.External() {
			if err := v.Driver.Available(); err != nil {
				if f.pathsVariantsSet {
					return nil, nil, nil, err
				}
				fmt.Fprintf(stderr, "skipping the many-locks runs of %s\n", err)
				skipped = append(skipped, "many locks of "+err.Error())
				continue
			}
		}
		vs = append(vs, v)
	}
	return runOrder(vs), ms, skipped, nil
}

// addManyLocks adds the many-locks section's steps to the plan: for each
// M, its rounds, each a turn of the variants.
func (p *benchPlan) addManyLocks(f benchFlags, vs []bench.Variant, ms []int) {
	if len(vs) == 0 || len(ms) == 0 {
		return
	}
	p.many, p.manyMs = vs, ms
	p.manyRounds = max(f.pathsRounds, 1)
	p.manyPerRound = f.pathsDuration / time.Duration(p.manyRounds)
	// The section runs after the grid, before re-entry and the hold cost,
	// whose steps makePlan has put last.
	after := len(p.reentry) + len(p.hold)*len(p.counts)
	tail := slices.Clone(p.steps[len(p.steps)-after:])
	p.steps = p.steps[:len(p.steps)-after]
	defer func() { p.steps = append(p.steps, tail...) }()
	for _, m := range ms {
		sessions := time.Duration(m * f.pathsN)
		for round := 1; round <= p.manyRounds; round++ {
			for i, v := range vs {
				est := p.manyPerRound + estRunOverhead
				if v.External() {
					if round == 1 {
						est += estDriverStart + v.Driver.Warmup + sessions*estPerSession
					}
				} else {
					est += sessions * estPerSession
				}
				if round == p.manyRounds && i == len(vs)-1 {
					est += estDriverStop + sessions*estPerSession
				}
				p.steps = append(p.steps, planStep{fmt.Sprintf("%s M=%d (%d/%d)", v.Name, m, round, p.manyRounds), est})
			}
		}
	}
}

// runManyLocks runs the many-locks section of the plan into rep: for each
// M, its rounds, the variants in turns, as the grid's N loop does. It
// returns the failures.
func runManyLocks(ctx context.Context, servers []string, f benchFlags, plan benchPlan, rep *bench.Report, prog *progress) []string {
	if len(plan.manyMs) == 0 {
		return nil
	}
	rep.ManyParams = bench.ManyLocksParams{Paths: plan.manyMs, Contenders: f.pathsN,
		Duration: f.pathsDuration, Rounds: plan.manyRounds}
	var failures []string
	for _, m := range plan.manyMs {
		cell := newCell()
		drivers := bench.NewDriverPool()
		for round := 1; round <= plan.manyRounds && ctx.Err() == nil; round++ {
			for _, v := range plan.many {
				var acquired atomic.Int64
				prog.start("", &acquired, 0)
				if cell.failed[v.Name] || ctx.Err() != nil {
					prog.done()
					continue
				}
				runCtx, cancel := context.WithTimeout(ctx, 3*plan.manyPerRound+3*time.Minute)
				res, err := bench.Run(runCtx, bench.Config{
					Servers: servers, Variant: v, Contenders: f.pathsN, Paths: m,
					Duration: plan.manyPerRound, Acquired: &acquired, Drivers: drivers,
				})
				cancel()
				prog.done()
				if msg := cell.add(v.Name, fmt.Sprintf("M=%d paths", m), res, err, prog); msg != "" {
					failures = append(failures, msg)
				}
			}
		}
		if err := drivers.Close(); err != nil {
			msg := fmt.Sprintf("M=%d paths: closing the peers' drivers: %v", m, err)
			prog.println("FAILED " + msg)
			failures = append(failures, msg)
		}
		for _, v := range plan.many {
			if r := cell.merged[v.Name]; r != nil {
				rep.ManyLocks = append(rep.ManyLocks, *r)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		failures = append(failures, "many locks: "+err.Error())
	}
	return failures
}

// cell gathers the rounds of one cell of the grid (one N, or one M),
// variant by variant: the rounds merged so far, and the variants that
// failed, which run no more rounds there.
type cell struct {
	merged map[string]*bench.Result
	failed map[string]bool
}

func newCell() cell { return cell{merged: map[string]*bench.Result{}, failed: map[string]bool{}} }

// add merges a round of variant name into its earlier ones. When the
// round failed (err), or its result can not be merged, the variant is
// dropped from the cell, and add says so on prog and returns the message
// (name, then where, then the error); else it returns "".
func (c cell) add(name, where string, res bench.Result, err error, prog *progress) string {
	if err == nil && c.merged[name] != nil {
		err = c.merged[name].Merge(res)
	} else if err == nil {
		c.merged[name] = &res
	}
	if err == nil {
		return ""
	}
	msg := fmt.Sprintf("%s %s: %v", name, where, err)
	prog.println("FAILED " + msg)
	c.failed[name] = true
	delete(c.merged, name)
	return msg
}
