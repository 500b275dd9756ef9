package locktest

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// T is what a case of the suite is handed: the testing package's own
// *testing.T, or, for a case the variant is expected to fail (see
// Variant.Expected), a recorder that keeps the failure from failing the
// run. The cases are written once, against T, and cannot tell which.
type T interface {
	testing.TB
	// Run runs f as a subtest, as testing.T.Run does.
	Run(name string, f func(T)) bool
}

// expectations is Run's bookkeeping of Variant.Expected. It learns which
// case paths the suite named and which it entered, so that a listed path
// that is no case (a case renamed, a typo) is reported instead of being
// silently never checked.
type expectations struct {
	want map[string]string

	mu      sync.Mutex
	named   map[string]bool // every case path handed to Run, filtered by -run or not
	entered map[string]bool // the case paths whose function ran
}

func newExpectations(want map[string]string) *expectations {
	return &expectations{want: want, named: map[string]bool{}, entered: map[string]bool{}}
}

// run runs the case at path (parent's subtest name) under t: as a plain
// subtest, or expected to fail.
func (e *expectations) run(t *testing.T, path, name string, f func(T)) bool {
	e.mu.Lock()
	e.named[path] = true
	why, expected := e.want[path]
	e.mu.Unlock()
	return t.Run(name, func(t *testing.T) {
		e.mu.Lock()
		e.entered[path] = true
		e.mu.Unlock()
		if expected {
			expectFailure(t, why, f)
			return
		}
		f(testT{T: t, e: e, path: path})
	})
}

// unused returns the listed paths the suite never named although it
// entered their parent: paths of no case. A path whose parent did not
// run (filtered out by -run, or skipped) can not be judged.
func (e *expectations) unused() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for p := range e.want {
		i := strings.LastIndexByte(p, '/')
		if !e.named[p] && (i < 0 || e.entered[p[:i]]) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// testT is a case the testing package runs itself.
type testT struct {
	*testing.T
	e    *expectations
	path string // the case's path below the suite, "DoneOnLoss/NodeDeleted"
}

func (t testT) Run(name string, f func(T)) bool {
	return t.e.run(t.T, t.path+"/"+name, name, f)
}

// expectFailure runs the case f, which the variant is expected to fail
// (why says how), with a recorder in place of t. The case must fail: its
// failure is logged, and a case that passes fails t, so that the list of
// expected failures can not go stale.
func expectFailure(t *testing.T, why string, f func(T)) {
	r := newRecorder(t, t.Name(), t.Context())
	r.run(f)
	switch {
	case r.Failed():
		t.Logf("fails as expected (%s):\n%s", why, r.report())
	case r.Skipped():
		t.Skipf("expected to fail (%s), but skipped: %s", why, r.skipMsg)
	default:
		t.Errorf("expected to fail (%s), but it passed: take it off the variant's Expected (and, for the textbook lock, its row off docs/hardening.md)", why)
	}
}

// recorder is the T of a case expected to fail. It runs the case on a
// goroutine of its own, records what the case reports (Error, Fatal,
// a panic) instead of failing the test, and ends the goroutine with
// runtime.Goexit where a test's would end (FailNow, SkipNow). Logs, and
// what the recorder does not override, go to the real test.
type recorder struct {
	testing.TB
	name   string
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	failed   bool
	skipped  bool
	skipMsg  string
	msgs     []string        // each failure reported, with where it was reported
	cleanups []func()        // run last first when the case ends, as testing does
	helpers  map[string]bool // functions that called Helper: where skips them
}

func newRecorder(tb testing.TB, name string, parent context.Context) *recorder {
	ctx, cancel := context.WithCancel(parent)
	return &recorder{TB: tb, name: name, ctx: ctx, cancel: cancel, helpers: map[string]bool{}}
}

// run runs f on a goroutine of its own and returns once it has ended
// and its cleanups have run.
func (r *recorder) run(f func(T)) {
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer r.runCleanups()
		defer r.recoverPanic()
		f(r)
	}()
	<-finished
}

// recoverPanic turns a panic of the case into a recorded failure: a lock
// that panics fails the case, and must not take the test binary down.
func (r *recorder) recoverPanic() {
	if p := recover(); p != nil {
		r.TB.Logf("panic in the case: %v\n%s", p, debug.Stack())
		r.record(fmt.Sprintf("panic: %v", p))
	}
}

func (r *recorder) runCleanups() {
	r.cancel() // as testing does: the context ends before the cleanups run
	for {
		r.mu.Lock()
		if len(r.cleanups) == 0 {
			r.mu.Unlock()
			return
		}
		f := r.cleanups[len(r.cleanups)-1]
		r.cleanups = r.cleanups[:len(r.cleanups)-1]
		r.mu.Unlock()
		f()
	}
}

func (r *recorder) record(msg string) {
	w := r.where()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, w+": "+msg)
}

// where returns file:line of the call that reported a failure: the first
// frame outside this file, the runtime (a panic's own frames) and the
// functions that called Helper, as testing reports it.
func (r *recorder) where() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		r.mu.Lock()
		helper := r.helpers[f.Function]
		r.mu.Unlock()
		if !helper && !strings.HasSuffix(f.File, "/locktest/expect.go") && !strings.HasPrefix(f.Function, "runtime.") {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return "?"
		}
	}
}

// report is what the case reported, one failure a line.
func (r *recorder) report() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

func (r *recorder) Name() string             { return r.name }
func (r *recorder) Context() context.Context { return r.ctx }

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) Helper() {
	pc := make([]uintptr, 1)
	runtime.Callers(2, pc)
	f, _ := runtime.CallersFrames(pc).Next()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.helpers[f.Function] = true
}

func (r *recorder) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) Skipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

func (r *recorder) Error(args ...any) { r.record(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }
func (r *recorder) Errorf(format string, args ...any) {
	r.record(fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }

// FailNow ends the case's goroutine, as testing.T.FailNow ends a test's.
func (r *recorder) FailNow() {
	r.Fail()
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.skip(strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
}
func (r *recorder) Skipf(format string, args ...any) { r.skip(fmt.Sprintf(format, args...)) }
func (r *recorder) SkipNow()                         { r.skip("") }

func (r *recorder) skip(msg string) {
	r.mu.Lock()
	r.skipped, r.skipMsg = true, msg
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Log(args ...any) {
	r.TB.Helper()
	r.TB.Log(args...)
}

func (r *recorder) Logf(format string, args ...any) {
	r.TB.Helper()
	r.TB.Logf(format, args...)
}

// Run runs f as a subtest: on a recorder of its own, whose failures are
// the parent's too (prefixed with the subtest's name).
func (r *recorder) Run(name string, f func(T)) bool {
	c := newRecorder(r.TB, r.name+"/"+name, r.ctx)
	c.run(f)
	if !c.Failed() {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	for _, m := range c.msgs {
		r.msgs = append(r.msgs, name+": "+m)
	}
	return false
}
