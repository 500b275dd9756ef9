package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/bench"
)

// A peer whose client is missing: left out of the default list with a
// line saying how to install it, but a failure when named in -variants.
func TestBenchVariantsMissingPeer(t *testing.T) {
	bench.Register(bench.Variant{Name: "missing-peer", Driver: &bench.Driver{
		Available: func() error { return fmt.Errorf("missing-peer: %w (%s)", bench.ErrPeerMissing, bench.PeersInstallHint) },
	}})
	var stderr bytes.Buffer
	f := benchFlags{variants: "sequential,missing-peer"}
	vs, skipped, err := benchVariants(f, &stderr)
	if err != nil || len(vs) != 1 || vs[0].Name != "sequential" || len(skipped) != 1 {
		t.Fatalf("default list: %v, skipped %v, %v", vs, skipped, err)
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "scripts/install-peers.sh") {
		t.Errorf("message %q: want one line naming scripts/install-peers.sh", msg)
	}
	f.variantsSet = true
	if _, _, err := benchVariants(f, &stderr); !errors.Is(err, bench.ErrPeerMissing) {
		t.Errorf("named in -variants: %v, want ErrPeerMissing", err)
	}
}

func TestRunOrderPutsPeersAfterSequential(t *testing.T) {
	var vs []bench.Variant
	for _, n := range []string{"naive", "kazoo", "sequential", "timeout", "zk-peer", "curator"} {
		vs = append(vs, bench.Variant{Name: n})
	}
	var got []string
	for _, v := range runOrder(vs) {
		got = append(got, v.Name)
	}
	if want := "sequential zk-peer curator kazoo naive timeout"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestBenchDefaults(t *testing.T) {
	f, err := parseBenchFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.rounds < 5 || f.variantsSet {
		t.Errorf("rounds %d, variantsSet %v", f.rounds, f.variantsSet)
	}
	if f.out != defaultOut || !strings.Contains(commands["bench"].summary, "write "+f.out+"/") {
		t.Errorf("bench writes %q by default; the usage says %q", f.out, commands["bench"].summary)
	}
	for _, p := range []string{"curator", "kazoo", "zk-peer"} {
		if !strings.Contains(","+f.variants+",", ","+p+",") {
			t.Errorf("default variants %q lack %s", f.variants, p)
		}
	}
}

// -full runs the whole grid, as the default run did before it was cut
// down to the headline; a flag given on the command line still applies.
func TestBenchFullRunsTheWholeGrid(t *testing.T) {
	f, err := parseBenchFlags([]string{"-full", "-rounds", "3"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.variants != strings.Join(bench.AllNames(), ",") || f.ns != "1,2,4,8,16,32,64" || f.duration != 4*time.Second ||
		f.headlineOnly != "" || f.holdCounts != "0,1,100,1000,10000" || f.priceSamples != 60 || f.variantsSet {
		t.Errorf("-full: %+v", f)
	}
	if f.rounds != 3 {
		t.Errorf("-full -rounds 3: rounds %d", f.rounds)
	}
}

// The default run: the peers at the headline's N only, sequential and
// naive at every N; with -n leaving the headline's N out, the peers run
// at every N instead of not at all.
func TestBenchDefaultPlan(t *testing.T) {
	f, err := parseBenchFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var vs []bench.Variant
	for _, name := range strings.Split(f.variants, ",") {
		v, err := bench.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	at := func(n int, ns []int) string {
		var got []string
		for _, v := range variantsAt(vs, n, ns, f) {
			got = append(got, v.Name)
		}
		return strings.Join(got, " ")
	}
	ns, err := parseInts(f.ns)
	if err != nil || !slices.Contains(ns, f.headlineN) {
		t.Fatalf("-n %s, -headline-n %d: %v", f.ns, f.headlineN, err)
	}
	for _, n := range ns {
		want := "sequential naive"
		if n == f.headlineN {
			want = "sequential zk-peer curator kazoo naive"
		}
		if got := at(n, ns); got != want {
			t.Errorf("N=%d: %s, want %s", n, got, want)
		}
	}
	if got, want := at(8, []int{8, 32}), "sequential zk-peer curator kazoo naive"; got != want {
		t.Errorf("-n 8,32, N=8: %s, want %s", got, want)
	}
	if f.holdCounts != "" || f.priceSamples != 0 {
		t.Errorf("the default run measures the hold cost (%q) or the price (%d)", f.holdCounts, f.priceSamples)
	}
	plan, err := makePlan(f, vs, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The steps are the runs and, first, the quorum-write ceiling.
	if want := (2*len(ns) + 3) * f.rounds; plan.runs() != want || len(plan.steps) != want+1 || plan.steps[0].label != "the quorum-write ceiling" {
		t.Errorf("%d runs, %d steps (the first %q); want %d runs and the ceiling first", plan.runs(), len(plan.steps), plan.steps[0].label, want)
	}
	desc := plan.describe(f)
	for _, s := range []string{"zk-peer, curator, kazoo at N = 16", "sequential, naive at N = 4,16,64", "quorum-write ceiling", "About "} {
		if !strings.Contains(desc, s) {
			t.Errorf("plan %q lacks %q", desc, s)
		}
	}
}

// The time left is the estimate of the steps not done, scaled by how the
// steps done went against their estimates; every line says it.
func TestProgressTimeLeft(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true, []planStep{{"a", 10 * time.Second}, {"b", 10 * time.Second}, {"c", 10 * time.Second}})
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	p.start("", nil, 0)
	now = now.Add(5 * time.Second)
	if got := p.left(now); got != 25*time.Second {
		t.Errorf("halfway through the first step as planned: %v left, want 25s", got)
	}
	now = now.Add(15 * time.Second) // the first step took twice its estimate
	p.done()
	// 20s left as planned, scaled by (20s + prior) / (10s + prior).
	scale := float64(20*time.Second+etaPrior) / float64(10*time.Second+etaPrior)
	want := time.Duration(float64(20*time.Second) * scale)
	if got := p.left(now); got != want {
		t.Errorf("after a slow first step: %v left, want %v", got, want)
	}
	if line := out.String(); !strings.Contains(line, "[1/3] a: 20s; about ") || !strings.Contains(line, " left") {
		t.Errorf("progress line %q: want the step, its time and the time left", line)
	}
}

// The many-locks section: 1 and 16 paths by default, up to 256 (1,024
// sessions) with -full; its steps come after the grid's and before the
// hold cost's, in the order runBench takes them.
func TestBenchManyLocksPlan(t *testing.T) {
	f, err := parseBenchFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if f.paths != "1,16" || f.pathsN != 4 {
		t.Errorf("default -paths %q -paths-n %d", f.paths, f.pathsN)
	}
	f, err = parseBenchFlags([]string{"-full", "-variants", "sequential", "-n", "4", "-rounds", "1",
		"-paths-variants", "sequential,zk-peer"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	many, ms, _, err := manyLocksVariants(f, &bytes.Buffer{})
	if err != nil || !slices.Equal(ms, []int{1, 16, 64, 256}) || len(many) != 2 {
		t.Fatalf("-full: many-locks %v at %v, %v", many, ms, err)
	}
	seq, err := bench.Lookup("sequential")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := makePlan(f, []bench.Variant{seq}, []int{4}, []bench.Variant{seq})
	if err != nil {
		t.Fatal(err)
	}
	before := len(plan.steps)
	plan.addManyLocks(f, many, ms)
	holds := len(plan.counts)
	if got, want := len(plan.steps)-before, len(ms)*f.pathsRounds*len(many); got != want {
		t.Errorf("%d many-locks steps, want %d", got, want)
	}
	last := plan.steps[len(plan.steps)-holds-1].label
	if want := fmt.Sprintf("zk-peer M=256 (%d/%d)", f.pathsRounds, f.pathsRounds); last != want {
		t.Errorf("last many-locks step %q, want %q", last, want)
	}
	if l := plan.steps[len(plan.steps)-1].label; !strings.Contains(l, "holding") {
		t.Errorf("last step %q, want the hold cost's", l)
	}
	if d := plan.describe(f); !strings.Contains(d, "many locks at once: sequential, zk-peer at M = 1,16,64,256") {
		t.Errorf("plan %q does not say the many-locks runs", d)
	}
}
