package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// The price section gives each pattern over the bare one, paired by
// round: rounds that swing alike give the exact ratio.
func TestPriceRatiosArePairedByRound(t *testing.T) {
	pr := Price{Samples: 5}
	for i := range 6 {
		f := time.Duration(100 + 20*i) // a load that changes from round to round
		pr.Rounds = append(pr.Rounds, PriceRound{
			Acquire: [patterns]time.Duration{10 * f, 11 * f, 12 * f, 13 * f},
			Cycle:   [patterns]time.Duration{20 * f, 21 * f, 22 * f, 23 * f},
		})
	}
	for _, tc := range []struct {
		p     Pattern
		cycle bool
		want  float64
	}{
		{PatternBare, false, 1},
		{PatternToken, false, 1.1},
		{PatternWatched, true, 1.1},
		{PatternCtx, false, 1.3},
		{PatternCtx, true, 1.15},
	} {
		if e := pr.Ratio(tc.p, tc.cycle); math.Abs(e.Median-tc.want) > 1e-9 || e.Hi-e.Lo > 1e-9 {
			t.Errorf("%v (cycle %v): %+v, want exactly %.2f", tc.p, tc.cycle, e, tc.want)
		}
	}
	rep := syntheticReport()
	rep.Price = &pr
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, 16); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## What the token, Done and ctx cost", "| +token read |", "| +ctx per request |",
		"In the lock runs at N=1, sequential's acquire p50 is"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	rep.Price = nil
	md.Reset()
	if err := rep.WriteMarkdown(&md, 16); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "What the token") {
		t.Error("README has a price section without a price measured")
	}
}

// MeasurePrice times every pattern in every round on a real ensemble and
// leaves no node behind.
func TestMeasurePrice(t *testing.T) {
	servers := zktest.Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, err := MeasurePrice(ctx, servers, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Rounds) != 2 || pr.Samples != 3 {
		t.Fatalf("%d rounds of %d samples, want 2 of 3", len(pr.Rounds), pr.Samples)
	}
	for i, r := range pr.Rounds {
		for p := range patterns {
			if r.Acquire[p] <= 0 || r.Cycle[p] < r.Acquire[p] {
				t.Errorf("round %d, %v: acquire %v, cycle %v", i, p, r.Acquire[p], r.Cycle[p])
			}
		}
	}
	conn := zktest.Connect(t)
	kids, _, err := conn.Children(Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if strings.HasPrefix(k, "price-") {
			t.Errorf("%s/%s left behind", Root, k)
		}
	}
}

// A context that ends stops MeasurePrice with its error.
func TestMeasurePriceStopsWithCtx(t *testing.T) {
	servers := zktest.Servers(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasurePrice(ctx, servers, 2, 3); err == nil {
		t.Fatal("MeasurePrice with a cancelled ctx returned no error")
	}
}
