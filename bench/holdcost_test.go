package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// MeasureHoldCost takes and keeps its locks through the window, counts
// what they add (a held sequential lock is one goroutine: its node's
// watch), and leaves nothing behind. Its figures are the bench's; this
// test checks only what must hold on any machine.
func TestMeasureHoldCost(t *testing.T) {
	servers := zktest.Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := Lookup("sequential")
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	r, err := MeasureHoldCost(ctx, servers, v, n, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 0 {
		t.Errorf("%d of %d idle holds lost in the window", r.Lost, n)
	}
	if r.Goroutines < 0 || r.Goroutines > 2*n {
		t.Errorf("%d held locks added %d goroutines; want at most two each", n, r.Goroutines)
	}
	if r.PacketsPerSec <= 0 || r.Idle < 500*time.Millisecond {
		t.Errorf("window %v with %.1f packets/s: the session's own pings were not counted", r.Idle, r.PacketsPerSec)
	}
	conn := zktest.Connect(t)
	kids, _, err := conn.Children(Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if strings.HasPrefix(k, "sequential-hold-") {
			t.Errorf("%s/%s left behind", Root, k)
		}
	}
}

func TestMeasureHoldCostRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	v, _ := Lookup("sequential")
	for _, tc := range []struct {
		name string
		v    Variant
		n    int
		idle time.Duration
	}{
		{"NegativeCount", v, -1, time.Second},
		{"NoWindow", v, 1, 0},
		{"DrivenPeer", Variant{Name: "driven"}, 1, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := MeasureHoldCost(ctx, nil, tc.v, tc.n, tc.idle); err == nil || errors.Is(err, context.Canceled) {
				t.Errorf("MeasureHoldCost(%s) = %v; want an error about its input", tc.name, err)
			}
		})
	}
}
