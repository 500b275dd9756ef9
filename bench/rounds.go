package bench

import (
	"math"
	"time"
)

// RoundFigures are one round's headline figures. A Result keeps one per
// round it merged (Result.PerRound, in the order of the rounds), so that a
// report can give each figure as a median over the rounds with its
// interval, and pair round i of one variant with round i of another at
// the same N: the rounds of one turn ran seconds apart, under the same
// load on the machine.
type RoundFigures struct {
	Acquisitions int64
	Elapsed      time.Duration
	AcquireP50   time.Duration
	// AcquireP99 is 0 in a results.json written before it was kept.
	AcquireP99 time.Duration `json:",omitempty"`
	// HandoffP50 and HandoffP99 are 0 when the round had no handoff.
	HandoffP50, HandoffP99 time.Duration
	// FloorP50 is the delete-to-notification floor's p50 measured at the
	// start of the round's turn (Floors.Notify), so that handoff over
	// floor pairs two figures of the same moment of the machine; 0 when
	// the floor was measured once for the whole run.
	FloorP50 time.Duration `json:",omitempty"`
}

// Figure names one of the per-round figures.
type Figure int

// The per-round figures: throughput in acquisitions per second, the
// latencies in milliseconds.
const (
	FigThroughput Figure = iota
	FigAcquireP50
	FigHandoffP50
	FigHandoffP99
	// FigHandoffFloor is the round's handoff p50 over the floor measured
	// in the same round (a ratio, not milliseconds).
	FigHandoffFloor
	// FigFloorP50 is the delete-to-notification floor of the round.
	FigFloorP50
	// FigAcquireP99 is the round's acquire p99.
	FigAcquireP99
)

// Lower reports whether a smaller value of the figure is better.
func (f Figure) Lower() bool { return f != FigThroughput }

// String names the figure for reports.
func (f Figure) String() string {
	return [...]string{"throughput", "acquire p50", "handoff p50", "handoff p99", "handoff/floor", "floor p50", "acquire p99"}[f]
}

// value is the figure in one round, NaN when the round has none (no
// acquisition, no handoff).
func (f Figure) value(x RoundFigures) float64 {
	ms := func(d time.Duration) float64 {
		if d <= 0 {
			return math.NaN()
		}
		return millis(d)
	}
	switch f {
	case FigThroughput:
		if x.Acquisitions == 0 || x.Elapsed <= 0 {
			return math.NaN()
		}
		return float64(x.Acquisitions) / x.Elapsed.Seconds()
	case FigAcquireP50:
		return ms(x.AcquireP50)
	case FigHandoffP50:
		return ms(x.HandoffP50)
	case FigHandoffFloor:
		return ms(x.HandoffP50) / ms(x.FloorP50)
	case FigFloorP50:
		return ms(x.FloorP50)
	case FigAcquireP99:
		return ms(x.AcquireP99)
	default:
		return ms(x.HandoffP99)
	}
}

// wholeRun is the result's figures as one round: what a result read from
// a results.json written before rounds were kept has to offer.
func (r Result) wholeRun() RoundFigures {
	return RoundFigures{Acquisitions: r.Acquisitions, Elapsed: r.Elapsed, AcquireP50: r.Acquire.P50, AcquireP99: r.Acquire.P99,
		HandoffP50: r.Handoff.P50, HandoffP99: r.Handoff.P99, FloorP50: r.Floors.Notify.P50}
}

// roundValues is fig in every round, in round order (NaN where a round
// has none). A result without per-round figures gives its whole run, and
// a round without a floor of its own is compared with the run's.
func (r Result) roundValues(fig Figure) []float64 {
	rounds := r.PerRound
	if len(rounds) == 0 {
		rounds = []RoundFigures{r.wholeRun()}
	}
	out := make([]float64, len(rounds))
	for i, x := range rounds {
		if x.FloorP50 == 0 {
			x.FloorP50 = r.Floors.Notify.P50
		}
		out[i] = fig.value(x)
	}
	return out
}

// Estimate is fig's median over the result's rounds, with its
// confidence interval.
func (r Result) Estimate(fig Figure) Estimate { return MedianCI(r.roundValues(fig)) }

// Compare is the paired ratio of fig between variants a and b with n
// contenders, round i of a over round i of b; ok is false when either run
// is missing.
func (r *Report) Compare(a, b string, n int, fig Figure) (e Estimate, ok bool) {
	ra, okA := r.Find(a, n)
	rb, okB := r.Find(b, n)
	if !okA || !okB {
		return Estimate{}, false
	}
	return PairedRatio(ra.roundValues(fig), rb.roundValues(fig)), true
}
