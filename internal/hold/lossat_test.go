package hold

import (
	"testing"
	"time"
)

// lossAt is the rule that keeps a holder from believing past the moment
// the leader may expire its session: a session timeout, less a tenth,
// after the last moment the leader surely heard of the session. Nothing
// else moves it: answers from a server that may be cut off from the
// leader (pings, reads) do not count.
func TestLossAt(t *testing.T) {
	heard := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		st   time.Duration
		want time.Duration
	}{
		{time.Second, 900 * time.Millisecond},
		{1200 * time.Millisecond, 1080 * time.Millisecond},
		{10 * time.Second, 9 * time.Second},
	} {
		if got := lossAt(heard, tc.st).Sub(heard); got != tc.want {
			t.Errorf("session timeout %v: lossAt = heard + %v, want heard + %v", tc.st, got, tc.want)
		}
	}
}
