package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows where a bench is: a bar with the current variant, N and an
// ETA on a terminal, one line per run otherwise (logs, CI).
type progress struct {
	w       io.Writer
	enabled bool
	runs    int
	f       benchFlags

	bar      *progressbar.ProgressBar // nil when not on a terminal
	mu       sync.Mutex
	stopTick chan struct{}
	ticker   sync.WaitGroup
	step     int
	label    string
	began    time.Time
}

const unitsPerRun = 1000

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, enabled bool, runs int, f benchFlags) *progress {
	p := &progress{w: w, enabled: enabled, runs: runs, f: f}
	if enabled && isTerminal(w) {
		p.bar = progressbar.NewOptions(runs*unitsPerRun,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetDescription("bench"),
		)
	}
	return p
}

// start begins run step (1-based); acquired counts its acquisitions.
func (p *progress) start(step int, label string, acquired *atomic.Int64) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	p.step, p.label, p.began = step, label, time.Now()
	p.mu.Unlock()
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("[%d/%d] %-22s", step, p.runs, label))
	p.stopTick = make(chan struct{})
	p.ticker.Add(1)
	go func() {
		defer p.ticker.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopTick:
				return
			case <-t.C:
				// The run's share done: by the clock, or by acquisitions.
				frac := time.Since(p.began).Seconds() / p.f.duration.Seconds()
				if p.f.acquisitions > 0 {
					frac = float64(acquired.Load()) / float64(p.f.acquisitions)
				}
				frac = min(frac, 0.99)
				_ = p.bar.Set((step-1)*unitsPerRun + int(frac*unitsPerRun))
			}
		}
	}()
}

// done ends the current run.
func (p *progress) done() {
	if !p.enabled {
		return
	}
	if p.bar == nil {
		p.mu.Lock()
		fmt.Fprintf(p.w, "[%d/%d] %s: %v\n", p.step, p.runs, p.label, time.Since(p.began).Round(10*time.Millisecond))
		p.mu.Unlock()
		return
	}
	close(p.stopTick)
	p.ticker.Wait()
	_ = p.bar.Set(p.step * unitsPerRun)
}

// println prints a line without breaking the bar.
func (p *progress) println(s string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
