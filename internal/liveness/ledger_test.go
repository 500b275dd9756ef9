package liveness

import (
	"testing"
	"time"
)

// The rule of the package doc, request by request. T is 4s, so G is 1s;
// times are offsets from t0.
func TestLedgerCreditsARequestOnlyOnceALaterOneThroughTheLeaderProvesIt(t *testing.T) {
	const T = 4 * time.Second
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type req struct {
		sent, answered int
		viaLeader      bool
	}
	for _, tc := range []struct {
		name   string
		reqs   []req
		proven int // -1: nothing proven
	}{
		{"an answered sync proves nothing about itself", []req{{0, 5, true}}, -1},
		{"nor does a second one sent too soon after the first's answer", []req{{0, 5, true}, {500, 505, true}}, -1},
		{"a sync sent G after the first's answer proves the first", []req{{0, 5, true}, {1005, 1010, true}}, 0},
		{"exactly G is enough", []req{{0, 5, true}, {1005, 1007, true}}, 0},
		{"a read is proven by a later sync", []req{{100, 103, false}, {2000, 2004, true}}, 100},
		{"a read proves nothing", []req{{0, 5, true}, {3000, 3002, false}}, -1},
		{"the latest provable request is credited", []req{{0, 5, true}, {400, 405, false}, {1500, 1505, true}}, 400},
		{"answers arriving out of order", []req{{1500, 1505, true}, {0, 5, true}}, -1},
		{"a later sync proves the one before it in turn", []req{{0, 5, true}, {1005, 1010, true}, {2010, 2015, true}}, 1005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l ledger
			for _, r := range tc.reqs {
				l.answered(at(r.sent), at(r.answered), r.viaLeader, gap(T))
			}
			switch {
			case tc.proven < 0 && !l.proven.IsZero():
				t.Errorf("proven %v after t0, want nothing", l.proven.Sub(t0))
			case tc.proven >= 0 && !l.proven.Equal(at(tc.proven)):
				t.Errorf("proven %v after t0, want %v", l.proven.Sub(t0), at(tc.proven).Sub(t0))
			}
		})
	}
}

func TestLedgerCreditsARevalidationDirectly(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var l ledger
	l.answered(t0, t0.Add(time.Millisecond), true, time.Second)
	if !l.credit(t0.Add(time.Second)) || !l.proven.Equal(t0.Add(time.Second)) {
		t.Fatalf("proven %v after a revalidation at t0+1s", l.proven.Sub(t0))
	}
	if l.credit(t0) {
		t.Error("an earlier credit moved the proven moment back")
	}
	if len(l.open) != 0 {
		t.Errorf("%d exchanges kept that the credit made useless", len(l.open))
	}
}

func TestLedgerKeepsAtMostMaxOpenExchanges(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var l ledger
	const step = time.Second/spacing + time.Millisecond // far enough apart to be kept
	for i := range 3 * maxOpen {
		s := t0.Add(time.Duration(i) * step)
		l.answered(s, s, false, time.Second)
	}
	if len(l.open) != maxOpen {
		t.Fatalf("%d open exchanges, want %d", len(l.open), maxOpen)
	}
	if n, _ := l.newest(); !n.sent.Equal(t0.Add(time.Duration(3*maxOpen-1) * step)) {
		t.Errorf("the newest exchange was dropped: newest is %v", n.sent.Sub(t0))
	}
}

// A busy session: a request answered every millisecond, every tenth
// through the leader, for three gaps. The clock must keep up, a gap and
// a little behind, not stall because every exchange it kept is too young
// to prove.
func TestLedgerKeepsUpWithABusySession(t *testing.T) {
	const g = time.Second
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var l ledger
	end := 3 * g
	for d := time.Duration(0); d < end; d += time.Millisecond {
		s := t0.Add(d)
		l.answered(s, s.Add(500*time.Microsecond), d%(10*time.Millisecond) == 0, g)
	}
	if lag := t0.Add(end).Sub(l.proven); l.proven.IsZero() || lag > g+g/spacing+10*time.Millisecond {
		t.Errorf("after %v of requests a millisecond apart the clock trails by %v (proven %v); want at most %v", end, lag, l.proven.Sub(t0), g+g/spacing)
	}
}
