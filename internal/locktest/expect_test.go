package locktest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The recorder runs a case as testing runs a test: Error goes on, Fatal
// ends the case (its deferred calls and cleanups still run, last
// registered first, after the context ended), a subtest's failure is its
// parent's, and a panic is a failure, not a crash. Each failure is
// recorded with the line that reported it, a Helper's caller's line for
// a failure inside a Helper.
func TestRecorderRecordsFailures(t *testing.T) {
	r := newRecorder(t, t.Name(), context.Background())
	var order []string
	var ctxAtCleanup error
	reached := false
	var base int // the line of the case's first statement
	r.run(func(t T) {
		_, _, base, _ = runtime.Caller(0)
		t.Cleanup(func() { order = append(order, "first registered") })
		t.Cleanup(func() { order = append(order, "second registered"); ctxAtCleanup = t.Context().Err() })
		defer func() { order = append(order, "deferred") }()
		t.Errorf("went on after %d", 1)
		t.Run("Sub", func(t T) { t.Error("sub failed") })
		t.Run("SubPasses", func(t T) {})
		t.Run("SubPanics", func(t T) { panic("boom") })
		failInHelper(t)
		reached = true
	})
	if !r.Failed() || r.Skipped() {
		t.Fatalf("Failed() = %v, Skipped() = %v; want a failed case", r.Failed(), r.Skipped())
	}
	if reached {
		t.Error("the case went on after Fatalf")
	}
	want := []string{"deferred", "second registered", "first registered"}
	if !slices.Equal(order, want) {
		t.Errorf("ran %v, want %v", order, want)
	}
	if !errors.Is(ctxAtCleanup, context.Canceled) {
		t.Errorf("Context().Err() in a cleanup = %v, want %v", ctxAtCleanup, context.Canceled)
	}
	got := strings.Split(r.report(), "\n")
	for i, w := range []string{
		fmt.Sprintf("expect_test.go:%d: went on after 1", base+4),
		fmt.Sprintf("Sub: expect_test.go:%d: sub failed", base+5),
		fmt.Sprintf("SubPanics: expect_test.go:%d: panic: boom", base+7),
		fmt.Sprintf("expect_test.go:%d: fatal in a helper", base+8), // the helper's caller
	} {
		if i >= len(got) || got[i] != w {
			t.Errorf("report line %d: got %q, want %q (report:\n%s)", i, at(got, i), w, r.report())
		}
	}
	if len(got) != 4 {
		t.Errorf("report has %d lines, want 4:\n%s", len(got), r.report())
	}
}

func failInHelper(t T) {
	t.Helper()
	t.Fatalf("fatal in a helper")
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// A case that passes, or skips, is not failed; a skip ends the case.
func TestRecorderPassAndSkip(t *testing.T) {
	r := newRecorder(t, t.Name(), context.Background())
	r.run(func(t T) { t.Log("logged to the real test") })
	if r.Failed() || r.Skipped() {
		t.Errorf("a passing case: Failed() = %v, Skipped() = %v", r.Failed(), r.Skipped())
	}
	r = newRecorder(t, t.Name(), context.Background())
	reached := false
	r.run(func(t T) { t.Skipf("no %s here", "ensemble"); reached = true })
	if r.Failed() || !r.Skipped() || r.skipMsg != "no ensemble here" || reached {
		t.Errorf("a skipped case: Failed() = %v, Skipped() = %v, message %q, went on %v", r.Failed(), r.Skipped(), r.skipMsg, reached)
	}
}

// A listed path is reported when its parent ran and never named it, and
// only then: a parent filtered out by -run or skipped can not tell.
func TestExpectationsUnused(t *testing.T) {
	e := newExpectations(map[string]string{
		"Known":            "",
		"Renamed":          "",
		"Parent/Known":     "",
		"Parent/Renamed":   "",
		"Filtered/Renamed": "",
	})
	for _, p := range []string{"Known", "Parent", "Parent/Known", "Filtered"} {
		e.named[p] = true
	}
	e.entered["Parent"] = true
	if got, want := e.unused(), []string{"Parent/Renamed", "Renamed"}; !slices.Equal(got, want) {
		t.Errorf("unused() = %v, want %v", got, want)
	}
}
