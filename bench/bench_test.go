package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// Run the harness as Go benchmarks, one sub-benchmark per variant and
// number of contenders; b.N is the number of acquisitions:
//
//	go test -run '^$' -bench . -benchmem ./bench/ | tee new.txt
//	benchstat old.txt new.txt
//
// ns/op is the contention phase's time per acquisition (sessions are opened
// and the counters read outside the timer); B/op and allocs/op are the
// client side's (lock, go-zookeeper and harness) per acquisition.

var benchContenders = []int{1, 2, 4, 8, 16, 32, 64}

// BenchReentries is the number of nested Lock/Unlock pairs a re-entrant
// variant's holder makes per hold, as zklocks bench does by default: it
// is what tells the two count modes apart.
const BenchReentries = 1

var (
	floorsOnce sync.Once
	floors     Floors
	floorsErr  error
)

// sharedFloors measures the floors once per test binary.
func sharedFloors(tb testing.TB, servers []string) *Floors {
	tb.Helper()
	floorsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		floors, floorsErr = MeasureFloors(ctx, servers, 100)
	})
	if floorsErr != nil {
		tb.Fatalf("floors: %v", floorsErr)
	}
	return &floors
}

func BenchmarkLock(b *testing.B) {
	servers := zktest.Servers(b)
	f := sharedFloors(b, servers)
	for _, name := range Names() {
		v, err := Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range benchContenders {
			b.Run(fmt.Sprintf("variant=%s/contenders=%d", name, n), func(b *testing.B) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				r, err := Run(ctx, Config{
					Servers: servers, Variant: v, Contenders: n, Acquisitions: b.N, Reentries: BenchReentries,
					Floors: f, OnStart: b.ResetTimer, OnStop: b.StopTimer,
				})
				if err != nil {
					b.Fatal(err)
				}
				ReportMetrics(b, r)
			})
		}
	}
}

// TestBenchSmoke runs every variant through the harness with one and four
// contenders and a handful of acquisitions, so the harness cannot rot:
// the peers run by a driver (curator, kazoo) too, which fail here, as in
// the interop tests, when their clients are not installed.
func TestBenchSmoke(t *testing.T) {
	servers := zktest.Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := MeasureFloors(ctx, servers, 5)
	if err != nil {
		t.Fatal(err)
	}
	if f.Notify.P50 <= 0 || f.CreateDelete.P50 <= 0 {
		t.Fatalf("floors not measured: %+v", f)
	}
	for _, name := range AllNames() {
		v, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				const acqs = 8
				r, err := Run(ctx, Config{Servers: servers, Variant: v, Contenders: n, Acquisitions: acqs, Floors: &f})
				if err != nil {
					t.Fatal(err)
				}
				if r.Acquisitions != acqs || r.Holds != acqs {
					t.Fatalf("acquisitions %d, holds %d, want %d", r.Acquisitions, r.Holds, acqs)
				}
				if w := r.WritesPerAcquisition(); w < 2 {
					t.Errorf("writes/acq = %.2f: a node-based lock writes at least a create and a delete", w)
				}
				if r.Acquire.Count != acqs {
					t.Errorf("acquire samples %d, want %d", r.Acquire.Count, acqs)
				}
				if n > 1 && r.Handoff.Count == 0 {
					t.Errorf("no handoff measured with %d contenders", n)
				}
				if r.Server.WatchersFired < r.SelfNotifications {
					t.Errorf("servers fired %d watchers, fewer than the %d self-notifications seen",
						r.Server.WatchersFired, r.SelfNotifications)
				}
				t.Logf("%s", r.Line())
			})
		}
	}
}

// A run of many locks at once: three paths of two contenders each, six
// sessions, every hold checked for exclusion on its own path.
func TestRunManyPaths(t *testing.T) {
	servers := zktest.Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"sequential", "zk-peer", "multilock-2"} {
		v, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(ctx, Config{Servers: servers, Variant: v, Contenders: 2, Paths: 3, Acquisitions: 24})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Paths != 3 || r.Contenders != 2 || r.Acquisitions != 24 {
			t.Errorf("%s: paths %d, contenders %d, acquisitions %d", name, r.Paths, r.Contenders, r.Acquisitions)
		}
		// The lock paths are made before the run: no write but the queue's.
		if w, want := r.WritesPerAcquisition(), 2*float64(max(v.Locks, 1)); w != want {
			t.Errorf("%s: writes/acq %.2f, want %.0f", name, w, want)
		}
	}
}
