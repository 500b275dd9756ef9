package bench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises one latency distribution of a run.
type Latency struct {
	Count         int64
	P50, P99, Max time.Duration
	Mean          time.Duration
}

// histogram records durations from 1µs to 2 minutes with three significant
// digits, the precision HDR histograms keep at every magnitude.
type histogram struct{ h *hdrhistogram.Histogram }

func newHistogram() *histogram {
	return &histogram{h: hdrhistogram.New(int64(time.Microsecond), int64(2*time.Minute), 3)}
}

func (h *histogram) record(d time.Duration) {
	d = max(time.Microsecond, min(d, 2*time.Minute))
	_ = h.h.RecordValue(int64(d)) // in range: cannot fail
}

func (h *histogram) recordAll(ds []time.Duration) {
	for _, d := range ds {
		h.record(d)
	}
}

func (h *histogram) merge(o *histogram) { h.h.Merge(o.h) }

func (h *histogram) summary() Latency {
	if h.h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.h.TotalCount(),
		P50:   time.Duration(h.h.ValueAtQuantile(50)),
		P99:   time.Duration(h.h.ValueAtQuantile(99)),
		Max:   time.Duration(h.h.Max()),
		Mean:  time.Duration(h.h.Mean()),
	}
}
