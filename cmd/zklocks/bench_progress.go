package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows where a bench is and how long it has left: a bar with the
// current step and the time left on a terminal, one line per step
// otherwise (logs, CI). The time left is the plan's estimate of the steps
// not done yet, scaled by how long the steps done so far took against
// their estimates (benchPlan: its costs are rough, this machine's load
// is what it is).
type progress struct {
	w       io.Writer
	enabled bool
	steps   []planStep
	total   time.Duration // the steps' estimates
	now     func() time.Time

	bar      *progressbar.ProgressBar // nil when not on a terminal
	mu       sync.Mutex
	stopTick chan struct{}
	ticker   sync.WaitGroup
	began    time.Time     // the first step's start
	step     int           // the current (or last) step, 1-based
	label    string        // its label
	stepAt   time.Time     // its start
	running  bool          // between start and done
	doneEst  time.Duration // the estimates of the steps done
	doneAt   time.Time     // when the last step done ended
}

// unit is the bar's unit: the bar counts estimated time.
const unit = time.Millisecond

// etaPrior damps the first steps' scaling of the estimates: as if this
// much time had already gone exactly as estimated.
const etaPrior = 20 * time.Second

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, enabled bool, steps []planStep) *progress {
	p := &progress{w: w, enabled: enabled, steps: steps, now: time.Now}
	for _, s := range steps {
		p.total += s.est
	}
	if enabled && isTerminal(w) {
		p.bar = progressbar.NewOptions64(int64(max(p.total/unit, 1)),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetDescription("bench"),
		)
	}
	return p
}

// left is the time the plan has left at now.
func (p *progress) left(now time.Time) time.Duration {
	rest := p.total - p.doneEst
	var since time.Duration // the time the steps done took, with the gaps between them
	if !p.began.IsZero() {
		since = p.doneAt.Sub(p.began)
	}
	if p.running && p.step >= 1 && p.step <= len(p.steps) {
		rest -= min(now.Sub(p.stepAt), p.steps[p.step-1].est)
	}
	scale := float64(since+etaPrior) / float64(p.doneEst+etaPrior)
	return time.Duration(float64(max(rest, 0)) * scale)
}

// leftStr says the time left, for a person.
func (p *progress) leftStr(now time.Time) string {
	l := p.left(now)
	if l < time.Second {
		return "almost done"
	}
	return "about " + roughDuration(l) + " left"
}

// start begins the next step of the plan. label replaces the plan's
// label (and is printed at once when not on a terminal: a step of its
// own, such as a hold-cost window, may take a while); with acquisitions
// above zero, acquired tells how far the step is.
func (p *progress) start(label string, acquired *atomic.Int64, acquisitions int) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	now := p.now()
	if p.began.IsZero() {
		p.began, p.doneAt = now, now
	}
	p.step++
	p.label = label
	if label == "" && p.step <= len(p.steps) {
		p.label = p.steps[p.step-1].label
	}
	p.stepAt, p.running = now, true
	step, runs := p.step, len(p.steps)
	p.mu.Unlock()
	if p.bar == nil {
		if label != "" {
			fmt.Fprintf(p.w, "[%d/%d] %s...\n", step, runs, label)
		}
		return
	}
	p.stopTick = make(chan struct{})
	p.ticker.Add(1)
	go func() {
		defer p.ticker.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			p.update(acquired, acquisitions)
			select {
			case <-p.stopTick:
				return
			case <-t.C:
			}
		}
	}()
}

// update moves the bar to where the current step is.
func (p *progress) update(acquired *atomic.Int64, acquisitions int) {
	p.mu.Lock()
	now := p.now()
	var est time.Duration
	if p.step <= len(p.steps) {
		est = p.steps[p.step-1].est
	}
	// The step's share done: by the clock, or by acquisitions.
	frac := 0.0
	if est > 0 {
		frac = now.Sub(p.stepAt).Seconds() / est.Seconds()
	}
	if acquired != nil && acquisitions > 0 {
		frac = float64(acquired.Load()) / float64(acquisitions)
	}
	frac = min(frac, 0.99)
	at := p.doneEst + time.Duration(frac*float64(est))
	label := p.label
	if len(label) > 40 {
		label = label[:39] + "…"
	}
	desc := fmt.Sprintf("[%d/%d] %-24s %s", p.step, len(p.steps), label, p.leftStr(now))
	p.mu.Unlock()
	p.bar.Describe(desc)
	_ = p.bar.Set64(int64(at / unit))
}

// done ends the current step.
func (p *progress) done() {
	if !p.enabled {
		return
	}
	if p.bar != nil {
		close(p.stopTick)
		p.ticker.Wait()
	}
	p.mu.Lock()
	now := p.now()
	took := now.Sub(p.stepAt)
	if p.step <= len(p.steps) {
		p.doneEst += p.steps[p.step-1].est
	}
	p.doneAt, p.running = now, false
	line := fmt.Sprintf("[%d/%d] %s: %v; %s", p.step, len(p.steps), strings.TrimSuffix(p.label, "..."),
		took.Round(10*time.Millisecond), p.leftStr(now))
	at := p.doneEst
	p.mu.Unlock()
	if p.bar == nil {
		fmt.Fprintln(p.w, line)
		return
	}
	_ = p.bar.Set64(int64(at / unit))
}

// println prints a line without breaking the bar.
func (p *progress) println(s string) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, s)
}

// finish ends the bar and says how long the plan took against its
// estimate.
func (p *progress) finish() {
	if !p.enabled {
		return
	}
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.began.IsZero() {
		return
	}
	fmt.Fprintf(p.w, "bench: %d of %d steps in %v (planned: about %s)\n", p.step, len(p.steps),
		p.now().Sub(p.began).Round(time.Second), roughDuration(p.total))
}
