package bench

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseHold(t *testing.T) {
	h, err := parseHold("hold curator-12 100 250 300")
	if err != nil || h != (driverHold{contender: 12, requested: 100, acquired: 250, released: 300}) {
		t.Errorf("parseHold: %+v, %v", h, err)
	}
	for _, bad := range []string{"hold kazoo-1 250 300", "hold kazoo-x 1 2 3", "hold kazoo-1 1 b 3", "done"} {
		if _, err := parseHold(bad); err == nil {
			t.Errorf("parseHold(%q) took it", bad)
		}
	}
}

func TestFillFromDriver(t *testing.T) {
	ms := int64(time.Millisecond)
	start := 1_000 * ms
	// Contender 1 asks at once and waits for 0's release; contender 0
	// comes back after its idle time, when the lock is free again: one
	// handoff only.
	holds := []driverHold{
		{1, start, start + 5*ms, start + 6*ms},
		{0, start, start + 2*ms, start + 3*ms},
		{0, start + 20*ms, start + 22*ms, start + 23*ms},
	}
	var r Result
	if err := fillFromDriver(&r, holds, start, start+25*ms, 1, 0); err != nil {
		t.Fatal(err)
	}
	if r.Acquisitions != 3 || r.Elapsed != 25*time.Millisecond || r.Holds != 3 {
		t.Errorf("counts: %+v", r)
	}
	if r.Acquire.Count != 3 || r.Acquire.P50 < 1990*time.Microsecond || r.Acquire.P50 > 2010*time.Microsecond {
		t.Errorf("acquire %+v, want a p50 of 2ms", r.Acquire)
	}
	if r.Handoff.Count != 1 || r.Handoff.P50 < 1990*time.Microsecond || r.Handoff.P50 > 2010*time.Microsecond {
		t.Errorf("handoff %+v, want one of 2ms", r.Handoff)
	}
	if len(r.PerRound) != 1 || r.PerRound[0].Acquisitions != 3 {
		t.Errorf("per round: %+v", r.PerRound)
	}
	overlap := []driverHold{{0, start, start + ms, start + 5*ms}, {1, start, start + 2*ms, start + 6*ms}}
	if err := fillFromDriver(&Result{}, overlap, start, start+7*ms, 1, 0); !errors.Is(err, ErrMutualExclusion) {
		t.Errorf("overlapping holds: %v", err)
	}
}

// A driver that closes its sessions steadily is waited for however long
// that takes in all, as long as each close is said within the idle
// wait; one that falls silent is killed, and the error says how far it
// got. The drivers here are shell processes that close nothing: what is
// under test is stop's side of the exchange.
func TestStopWaitsWhileTheDriverClosesItsSessions(t *testing.T) {
	start := func(script string) *driverProc {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		p, err := startDriver(exec.CommandContext(ctx, "sh", "-c", script), cancel)
		if err != nil {
			t.Fatal(err)
		}
		p.idle = 500 * time.Millisecond
		return p
	}
	// Ten closes 150ms apart: 1.5s in all, three times the idle wait.
	steady := start(`cat >/dev/null; echo closing 10; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.15; echo "closed $i of 10"; done`)
	if err := steady.stop(); err != nil {
		t.Errorf("stop of a driver closing steadily = %v; want nil", err)
	}
	silent := start(`cat >/dev/null; echo closing 10; echo "closed 1 of 10"; exec sleep 30`)
	err := silent.stop()
	if err == nil || !strings.Contains(err.Error(), `"closed 1 of 10"`) {
		t.Errorf("stop of a driver gone silent = %v; want it killed, naming its last line", err)
	}
}

// Holds on different paths of a many-locks run may overlap; holds on one
// path may not. Contender i is on path i mod paths.
func TestFillFromDriverPaths(t *testing.T) {
	ms := int64(time.Millisecond)
	start := 1_000 * ms
	// Contenders 0 and 1 are on paths 0 and 1 of two: their holds overlap.
	apart := []driverHold{{0, start, start + ms, start + 5*ms}, {1, start, start + 2*ms, start + 6*ms}}
	if err := fillFromDriver(&Result{}, apart, start, start+7*ms, 1, 2); err != nil {
		t.Errorf("overlapping holds on two paths: %v", err)
	}
	// Contenders 0 and 2 share path 0 of two.
	same := []driverHold{{0, start, start + ms, start + 5*ms}, {2, start, start + 2*ms, start + 6*ms}}
	if err := fillFromDriver(&Result{}, same, start, start+7*ms, 1, 2); !errors.Is(err, ErrMutualExclusion) {
		t.Errorf("overlapping holds on one path: %v", err)
	}
}
