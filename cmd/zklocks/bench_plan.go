package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zklocks/zklocks/bench"
)

// benchPlan is what a zklocks bench run will do, step by step, with a
// rough estimate of each step's time: printed before the run, and the
// progress line's basis for the time left.
type benchPlan struct {
	ns       []int
	at       map[int][]bench.Variant // the variants run at each N, in run order
	rounds   int
	perRound benchFlags // the flags of one round (duration, acquisitions)
	ceiling  bool
	price    bool
	reentry  []bench.Variant
	hold     []bench.Variant
	counts   []int
	steps    []planStep
	// The many-locks section: its variants in run order, its Ms, its
	// rounds and one round's flags (duration).
	many         []bench.Variant
	manyMs       []int
	manyRounds   int
	manyPerRound time.Duration
}

// planStep is one step of the plan: the ceiling, a run of one variant at
// one N in one round, the price, one re-entry measurement or one hold-cost window.
type planStep struct {
	label string
	est   time.Duration
}

// Rough costs of a step on the 2-core machine the committed runs come
// from, for the plan's estimate. They need not be right: the progress
// line scales what is left by how long the steps done so far took
// against their estimates.
const (
	estRunOverhead = 100 * time.Millisecond // sessions, settle and mntr around a run
	estPerSession  = 3 * time.Millisecond   // one more contender's session to open and close
	estPerWaiter   = 6 * time.Millisecond   // one more waiter at a lock at the path (naive) as a round drains
	estPerAcquire  = 3 * time.Millisecond   // one acquisition, for -acquisitions
	estFloorSample = 30 * time.Millisecond  // one floor sample (create+delete, notification)
	estDriverStart = 400 * time.Millisecond // a driver's process, before its warm-up
	estDriverStop  = 500 * time.Millisecond // the drivers of one N ending
	estPriceSample = 5 * time.Millisecond   // one sample of one request pattern of the price
	estReentry     = 6 * time.Millisecond   // one re-entry (node mode: two writes)
	estHoldSetup   = 1 * time.Second        // a hold-cost window's session and GC
	estHoldPerLock = 1 * time.Millisecond   // taking and releasing one held lock
	estDriverLock  = 2 * time.Millisecond   // the same in a driver
	estCeilingStep = 1 * time.Second        // a ceiling step's sessions to open and close, beyond its window
)

// variantsAt returns the variants of vs that run at n, in run order: all of
// them, except that a variant of -headline-only runs at -headline-n only
// (at every N when -n leaves -headline-n out).
func variantsAt(vs []bench.Variant, n int, ns []int, f benchFlags) []bench.Variant {
	only := splitNames(f.headlineOnly)
	var out []bench.Variant
	for _, v := range vs {
		if slices.Contains(only, v.Name) && n != f.headlineN && slices.Contains(ns, f.headlineN) {
			continue
		}
		out = append(out, v)
	}
	return runOrder(out)
}

func splitNames(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// makePlan lays out the run of f: the quorum-write ceiling, the price, the grid (for each N, its
// rounds, each a turn of the variants run at that N), the re-entry
// measurements and the hold cost, in the order runBench takes them.
func makePlan(f benchFlags, variants []bench.Variant, ns []int, hold []bench.Variant) (benchPlan, error) {
	p := benchPlan{ns: ns, at: map[int][]bench.Variant{}, rounds: max(f.rounds, 1), perRound: f, hold: hold}
	p.perRound.duration = f.duration / time.Duration(p.rounds)
	if f.acquisitions > 0 {
		p.perRound.acquisitions = max(f.acquisitions/p.rounds, 1)
	}
	if strings.TrimSpace(f.holdCounts) != "" && len(hold) > 0 {
		counts, err := parseCounts(f.holdCounts, "-hold-counts", 0)
		if err != nil {
			return p, err
		}
		p.counts = counts
	}
	add := func(label string, est time.Duration) { p.steps = append(p.steps, planStep{label, est}) }

	if f.ceiling > 0 {
		p.ceiling = true
		steps := time.Duration(len(bench.CeilingSessions))
		add("the quorum-write ceiling", steps*(f.ceiling+estCeilingStep))
	}
	if f.priceSamples > 0 {
		p.price = true
		add("the token's and Done's price", time.Duration(p.rounds*f.priceSamples)*3*estPriceSample)
	}
	runTime := p.perRound.duration
	if p.perRound.acquisitions > 0 {
		runTime = time.Duration(p.perRound.acquisitions) * estPerAcquire
	}
	floors := time.Duration(floorSamplesPerRound(f.floorSamples, p.rounds)) * estFloorSample
	for _, n := range ns {
		at := variantsAt(variants, n, ns, f)
		p.at[n] = at
		drivers := false
		for round := 1; round <= p.rounds; round++ {
			for i, v := range at {
				est := runTime + estRunOverhead + time.Duration(n)*estPerSession
				if v.NodeAtPath {
					est += time.Duration(n) * estPerWaiter
				}
				if i == 0 {
					est += floors
				}
				if v.External() {
					drivers = true
					if round == 1 {
						est += estDriverStart + v.Driver.Warmup
					}
				}
				if round == p.rounds && i == len(at)-1 && drivers {
					est += estDriverStop
				}
				label := fmt.Sprintf("%s n=%d", v.Name, n)
				if p.rounds > 1 {
					label += fmt.Sprintf(" (%d/%d)", round, p.rounds)
				}
				add(label, est)
			}
		}
	}
	if f.reentrySamp > 0 {
		for _, v := range variants {
			if v.Reenter != nil {
				p.reentry = append(p.reentry, v)
				add("re-entry of "+v.Name, 500*time.Millisecond+time.Duration(f.reentrySamp)*estReentry)
			}
		}
	}
	for _, v := range p.hold {
		for _, n := range p.counts {
			per := estHoldPerLock
			if v.External() {
				per = estDriverLock
			}
			add(fmt.Sprintf("%s holding %d locks idle", v.Name, n), f.holdIdle+estHoldSetup+time.Duration(n)*per)
		}
	}
	return p, nil
}

// runs is the number of runs in the grid.
func (p benchPlan) runs() int {
	k := 0
	for _, n := range p.ns {
		k += len(p.at[n]) * p.rounds
	}
	return k
}

// estimate is the plan's time, from the steps' rough costs.
func (p benchPlan) estimate() time.Duration {
	var t time.Duration
	for _, s := range p.steps {
		t += s.est
	}
	return t
}

// describe says what the plan runs, in a few lines.
func (p benchPlan) describe(f benchFlags) string {
	// Group the variants by the N they run at, in the order of -variants.
	type group struct {
		names []string
		ns    []int
	}
	var groups []group
	var order []string
	for _, n := range p.ns {
		for _, v := range p.at[n] {
			if !slices.Contains(order, v.Name) {
				order = append(order, v.Name)
			}
		}
	}
	for _, name := range order {
		var ns []int
		for _, n := range p.ns {
			if slices.ContainsFunc(p.at[n], func(v bench.Variant) bool { return v.Name == name }) {
				ns = append(ns, n)
			}
		}
		if k := len(groups); k > 0 && slices.Equal(groups[k-1].ns, ns) {
			groups[k-1].names = append(groups[k-1].names, name)
		} else {
			groups = append(groups, group{[]string{name}, ns})
		}
	}
	var what []string
	for _, g := range groups {
		who := strings.Join(g.names, ", ")
		if len(g.names) > 6 {
			who = fmt.Sprintf("%d variants (%s, ...)", len(g.names), strings.Join(g.names[:3], ", "))
		}
		what = append(what, fmt.Sprintf("%s at N = %s", who, intsStr(g.ns)))
	}
	per := fmt.Sprintf("%d rounds of %v", p.rounds, p.perRound.duration.Round(time.Millisecond))
	if p.perRound.acquisitions > 0 {
		per = fmt.Sprintf("%d rounds of %d acquisitions", p.rounds, p.perRound.acquisitions)
	}
	s := fmt.Sprintf("plan: %s; %s at each N, the variants in turns: %d runs", strings.Join(what, "; "), per, p.runs())
	if len(p.ns) == 0 {
		s = "plan: no grid (-n is empty)"
	}
	var extra []string
	if p.ceiling {
		extra = append(extra, fmt.Sprintf("first the ensemble's quorum-write ceiling (%s sessions until saturated, %v each)",
			intsStr(bench.CeilingSessions), f.ceiling))
	}
	if p.price {
		when := "first"
		if p.ceiling {
			when = "then"
		}
		extra = append(extra, fmt.Sprintf("%s the token's and Done's price (%d rounds of %d samples)", when, p.rounds, f.priceSamples))
	}
	if len(p.manyMs) > 0 {
		extra = append(extra, fmt.Sprintf("then many locks at once: %s at M = %s paths of %d contenders (%d rounds of %v)",
			names(p.many), intsStr(p.manyMs), f.pathsN, p.manyRounds, p.manyPerRound.Round(time.Millisecond)))
	}
	if len(p.reentry) > 0 {
		extra = append(extra, fmt.Sprintf("then re-entry (%d samples) of %s", f.reentrySamp, names(p.reentry)))
	}
	if len(p.counts) > 0 {
		extra = append(extra, fmt.Sprintf("then the hold cost of %s with %s locks held for %v each", names(p.hold), intsStr(p.counts), f.holdIdle))
	}
	if len(extra) > 0 {
		s += "; " + strings.Join(extra, "; ")
	}
	return s + fmt.Sprintf(". About %s.", roughDuration(p.estimate()))
}

func names(vs []bench.Variant) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.Name
	}
	return strings.Join(s, ", ")
}

func intsStr(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// roughDuration rounds d for a person: to 10 seconds under 10 minutes,
// to the minute above.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		d = d.Round(time.Second)
	case d < 10*time.Minute:
		d = d.Round(10 * time.Second)
	default:
		d = d.Round(time.Minute)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// fullPlan is the plan of zklocks bench -full on this machine, for the
// default run's plan line; ok is false when it cannot be made.
func fullPlan() (benchPlan, bool) {
	f, err := parseBenchFlags([]string{"-full"}, io.Discard)
	if err != nil {
		return benchPlan{}, false
	}
	ns, err := parseInts(f.ns)
	if err != nil {
		return benchPlan{}, false
	}
	vs, _, err := benchVariants(f, io.Discard)
	if err != nil {
		return benchPlan{}, false
	}
	hold, _, _ := holdVariants(f, io.Discard)
	p, err := makePlan(f, vs, ns, hold)
	if err != nil {
		return p, false
	}
	many, ms, _, err := manyLocksVariants(f, io.Discard)
	if err != nil {
		return p, false
	}
	p.addManyLocks(f, many, ms)
	return p, true
}

// wrapText breaks s into lines of at most width columns (a longer word
// stays whole), the lines after the first indented by indent.
func wrapText(s string, width int, indent string) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
			if len(lines) > 0 {
				line = indent + w
			}
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
