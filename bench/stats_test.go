package bench

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestMedianCIKnownData(t *testing.T) {
	// 6 values: the 95% interval is [min, max] at level 1 - 2/64.
	e := MedianCI([]float64{5, 1, 4, 2, 6, 3})
	if e.Median != 3.5 || e.Lo != 1 || e.Hi != 6 || e.N != 6 {
		t.Errorf("6 values: %+v, want median 3.5 in [1, 6]", e)
	}
	if math.Abs(e.Level-0.96875) > 1e-9 {
		t.Errorf("6 values: level %v, want 0.96875", e.Level)
	}
	// 9 values: x(2)..x(8), level 1 - 2*10/512.
	e = MedianCI([]float64{9, 8, 7, 6, 5, 4, 3, 2, 1})
	if e.Median != 5 || e.Lo != 2 || e.Hi != 8 || math.Abs(e.Level-0.9609375) > 1e-9 {
		t.Errorf("9 values: %+v, want 5 in [2, 8] at 0.9609", e)
	}
	// 5 values cannot reach 95%: [min, max] and the level it has.
	e = MedianCI([]float64{1, 2, 3, 4, 5})
	if e.Lo != 1 || e.Hi != 5 || math.Abs(e.Level-0.9375) > 1e-9 {
		t.Errorf("5 values: %+v, want [1, 5] at 0.9375", e)
	}
	if e := MedianCI([]float64{7}); e.Median != 7 || e.Lo != 7 || e.Hi != 7 || e.Level != 0 || e.HasInterval() {
		t.Errorf("one value: %+v", e)
	}
	if e := MedianCI(nil); e.N != 0 || e.Spans(0) {
		t.Errorf("no values: %+v", e)
	}
	if e := MedianCI([]float64{math.NaN(), 2, 4}); e.N != 2 || e.Median != 3 {
		t.Errorf("NaN not left out: %+v", e)
	}
}

func TestMedianCIContainsMedianAndShrinks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sample := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 100 + 10*rng.NormFloat64()
		}
		return xs
	}
	prev := math.Inf(1)
	for _, n := range []int{6, 12, 50, 400} {
		e := MedianCI(sample(n))
		if !(e.Lo <= e.Median && e.Median <= e.Hi) {
			t.Errorf("n=%d: median %v outside [%v, %v]", n, e.Median, e.Lo, e.Hi)
		}
		if e.Level < ConfidenceLevel {
			t.Errorf("n=%d: level %v", n, e.Level)
		}
		w := e.Hi - e.Lo
		if w >= prev {
			t.Errorf("n=%d: width %v, not narrower than %v with fewer values", n, w, prev)
		}
		prev = w
	}
}

// Over many samples of 9 from a known distribution, the interval holds
// the true median at least about as often as its level says.
func TestMedianCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 4000
	hit := 0
	for range trials {
		xs := make([]float64, 9)
		for i := range xs {
			xs[i] = rng.ExpFloat64() // median ln 2, skewed
		}
		if MedianCI(xs).Spans(math.Ln2) {
			hit++
		}
	}
	if got := float64(hit) / trials; got < 0.94 {
		t.Errorf("coverage %.3f, want about 0.961", got)
	}
}

func TestPairedRatio(t *testing.T) {
	// A is 1.2x B in every round, while the machine's speed swings from
	// round to round by far more than 20%: the paired ratio sees 1.2x.
	b := []float64{100, 60, 140, 80, 120, 90}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = 1.2 * b[i]
	}
	e := PairedRatio(a, b)
	if math.Abs(e.Median-1.2) > 1e-9 || math.Abs(e.Lo-1.2) > 1e-9 || e.NoDifference() {
		t.Errorf("paired ratio %+v, want 1.2 with no room for 1", e)
	}
	// The medians alone would not tell them apart here.
	if MedianCI(a).Lo > MedianCI(b).Hi {
		t.Error("the test's premise: unpaired intervals overlap")
	}
	// Missing and zero values drop their pair, not the rest.
	e = PairedRatio([]float64{2, math.NaN(), 3, 0}, []float64{1, 1, 0, 1})
	if e.N != 1 || e.Median != 2 {
		t.Errorf("pairs with a missing side: %+v", e)
	}
}

func TestNoDifference(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		same bool
	}{
		{[]float64{1.1, 0.9, 1.05, 0.97, 1.02, 0.99}, []float64{1, 1, 1, 1, 1, 1}, true},
		{[]float64{1.3, 1.1, 1.25, 1.2, 1.15, 1.4}, []float64{1, 1, 1, 1, 1, 1}, false},
		{[]float64{0.7, 0.8, 0.75, 0.9, 0.85, 0.8}, []float64{1, 1, 1, 1, 1, 1}, false},
	} {
		if got := PairedRatio(c.a, c.b).NoDifference(); got != c.same {
			t.Errorf("%v over %v: no difference = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// statsOf reads another process's CPU, threads and memory from /proc;
// read on this process, they must be there, and its CPU must grow as
// getrusage's does.
func TestStatsOfThisProcess(t *testing.T) {
	before, err := statsOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.threads < 1 || before.rss <= 0 || before.cpu <= 0 {
		t.Fatalf("statsOf(self) = %+v; want threads, resident memory and CPU time", before)
	}
	const work = 30 * time.Millisecond
	c0, deadline := processCPU(), time.Now().Add(10*time.Second)
	for processCPU()-c0 < work && time.Now().Before(deadline) { // spin: CPU time is what is measured
	}
	after, err := statsOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after.cpu - before.cpu; got < work*2/3 {
		t.Errorf("CPU grew by %v while getrusage counted %v", got, processCPU()-c0)
	}
	if _, err := statsOf(-1); err == nil {
		t.Error("statsOf(-1): no error for a process that does not exist")
	}
}
