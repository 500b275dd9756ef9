package bench

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// ConfidenceLevel is the confidence of every interval the bench reports.
//
// Every headline figure is the median of k rounds with a confidence
// interval for that median, and every comparison is the median of k
// paired ratios (round i of A over round i of B, at one N) with the same
// kind of interval. The interval is the distribution-free one benchstat
// uses: the order statistics x(j) and x(k+1-j) for the largest j at which
// the chance that they enclose the true median is at least the level.
// That chance depends on k alone (the number of rounds that fall below
// the median is Binomial(k, 1/2), whatever the rounds' distribution), so
// the interval is exact at any k and needs no random numbers: rendering a
// results.json again gives the same intervals. A bootstrap of the median
// was the other choice; at the k a bench can afford it under-covers
// (with k = 5 a bootstrapped median can only be one of the five values,
// and its nominal 95% interval is [min, max], which covers 93.75%). The
// price of exactness: below 6 rounds no interval reaches 95% (the
// Estimate says what level [min, max] reaches), from 6 to 8 rounds the
// interval is [min, max], from 9 to 11 it drops the lowest and the
// highest round, from 12 to 14 two of each.
const ConfidenceLevel = 0.95

// Estimate is a median and a confidence interval for it.
type Estimate struct {
	Median, Lo, Hi float64
	// N is the number of values behind the estimate; 0 means none.
	N int
	// Level is the confidence of [Lo, Hi]: ConfidenceLevel or more, or
	// less when N is too small to reach it ([Lo, Hi] is then the whole
	// range of the values, and a single value has level 0).
	Level float64
}

// MedianCI returns the median of xs and its order-statistic confidence
// interval (see ConfidenceLevel). NaNs are left out.
func MedianCI(xs []float64) Estimate {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n == 0 {
		return Estimate{}
	}
	slices.Sort(v)
	e := Estimate{N: n, Median: median(v)}
	j, level := orderIndex(n, ConfidenceLevel)
	e.Lo, e.Hi, e.Level = v[j-1], v[n-j], level
	return e
}

// median is the middle value of sorted v, or the mean of the two middle
// ones.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// orderIndex returns the largest j (1-based, at least 1) for which
// [x(j), x(n+1-j)] of n sorted values encloses the median with
// probability at least level, and that probability. When even j = 1 falls
// short it returns 1 and the level [min, max] reaches.
func orderIndex(n int, level float64) (int, float64) {
	b := distuv.Binomial{N: float64(n), P: 0.5}
	// P(j <= B <= n-j): the number of values below the median.
	cover := func(j int) float64 {
		if n-j < j {
			return 0
		}
		return b.CDF(float64(n-j)) - b.CDF(float64(j-1))
	}
	best, bestLevel := 1, cover(1)
	for j := 2; 2*j <= n; j++ {
		c := cover(j)
		if c < level {
			break
		}
		best, bestLevel = j, c
	}
	return best, bestLevel
}

// PairedRatio is the median of the ratios a[i]/b[i] with its confidence
// interval: a and b are the rounds of two variants at one N, paired by
// round, so that a burst of load on the machine, which falls on the
// rounds of one turn alike, cancels in each ratio. Pairs in which either
// value is missing (NaN) or not positive are left out.
func PairedRatio(a, b []float64) Estimate {
	var r []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 && !math.IsInf(a[i], 0) && !math.IsInf(b[i], 0) {
			r = append(r, a[i]/b[i])
		}
	}
	return MedianCI(r)
}

// Spans reports whether x lies in the interval.
func (e Estimate) Spans(x float64) bool { return e.N > 0 && e.Lo <= x && x <= e.Hi }

// NoDifference reports whether a ratio's interval spans 1: the rounds do
// not tell the two apart at the interval's level.
func (e Estimate) NoDifference() bool { return e.Spans(1) }

// HasInterval reports whether there are at least two values behind the
// estimate, so that [Lo, Hi] says something.
func (e Estimate) HasInterval() bool { return e.N >= 2 }

// Scale multiplies the median and the bounds by f (for unit changes).
func (e Estimate) Scale(f float64) Estimate {
	e.Median, e.Lo, e.Hi = e.Median*f, e.Lo*f, e.Hi*f
	return e
}
