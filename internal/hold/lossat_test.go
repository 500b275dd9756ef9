package hold

import (
	"testing"
	"time"
)

// lossAt is the rule that keeps a cut-off holder from believing past the
// moment the servers may expire its session: a session timeout, less a
// tenth, after the last moment the servers surely heard from the client.
func TestLossAt(t *testing.T) {
	const st, poll = 1200 * time.Millisecond, 150 * time.Millisecond // read timeout 800ms, a tenth 120ms
	seen := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		lastHeard time.Time // zero: no answer yet
		want      time.Duration
	}{
		// Heard from the servers at best a read timeout before the tick
		// ahead of seen: 1200 - 150 - 800 - 120 = 130ms after seen.
		{"no answer ever", time.Time{}, 130 * time.Millisecond},
		{"answer long before the cut", seen.Add(-10 * time.Second), 130 * time.Millisecond},
		// An answer just before the cut was seen moves the moment on:
		// 1200 - 120 - 50 = 1030ms after seen.
		{"answer 50ms before the cut was seen", seen.Add(-50 * time.Millisecond), 1030 * time.Millisecond},
		// A reconnection too brief for the ticks: its answer counts.
		{"answer 400ms after the cut was seen", seen.Add(400 * time.Millisecond), 1480 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lossAt(seen, tc.lastHeard, st, poll).Sub(seen); got != tc.want {
				t.Errorf("lossAt = seen + %v, want seen + %v", got, tc.want)
			}
		})
	}
}
