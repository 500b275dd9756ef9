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
// watch), and leaves nothing behind; the peers' drivers likewise, in
// their own process. Its figures are the bench's; this test checks only
// what must hold on any machine.
func TestMeasureHoldCost(t *testing.T) {
	servers := zktest.Servers(t)
	for _, tc := range []struct {
		variant    string
		perLockMax int // goroutines (threads, for a driver) each held lock may add
		// idle must see a packet: sequential's keeper syncs every T/40;
		// the peers' clients send only a ping when idle for a third of T.
		idle time.Duration
	}{
		{"sequential", 2, 500 * time.Millisecond},
		{"curator", 1, SessionTimeout/3 + time.Second},
		{"kazoo", 1, SessionTimeout/3 + time.Second},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			v, err := Lookup(tc.variant)
			if err != nil {
				t.Fatal(err)
			}
			const n = 20
			r, err := MeasureHoldCost(ctx, servers, v, n, tc.idle)
			if err != nil {
				t.Fatal(err) // a peer not installed: scripts/install-peers.sh
			}
			if r.Lost > 0 || (r.Lost < 0) != r.Driver {
				t.Errorf("lost %d of %d idle holds in the window (driver %v)", r.Lost, n, r.Driver)
			}
			if r.Goroutines < 0 || r.Goroutines > tc.perLockMax*n {
				t.Errorf("%d held locks added %d goroutines or threads; want at most %d each", n, r.Goroutines, tc.perLockMax)
			}
			if r.PacketsPerSec <= 0 || r.Idle < tc.idle {
				t.Errorf("window %v with %.1f packets/s: the session's own pings were not counted", r.Idle, r.PacketsPerSec)
			}
			conn := zktest.Connect(t)
			kids, _, err := conn.Children(Root)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kids {
				if strings.HasPrefix(k, tc.variant+"-hold-") {
					t.Errorf("%s/%s left behind", Root, k)
				}
			}
		})
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
		{"DriverWithoutHoldMode", Variant{Name: "driven", Driver: &Driver{}}, 1, time.Second},
		{"NeitherNewNorDriver", Variant{Name: "nothing"}, 1, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := MeasureHoldCost(ctx, nil, tc.v, tc.n, tc.idle); err == nil || errors.Is(err, context.Canceled) {
				t.Errorf("MeasureHoldCost(%s) = %v; want an error about its input", tc.name, err)
			}
		})
	}
}
