package timeout

import (
	"testing"
	"time"
)

// The holder keeps a share of its lease in hand, and never less than a
// floor: at short leases a share alone leaves a few milliseconds for a
// late timer, less than one time slice of the scheduler under a CPU hog.
// At every lease it accepts, two renewals may still fail in a row before
// the holder gives up.
func TestGiveUpMarginHasAFloor(t *testing.T) {
	for _, tc := range []struct {
		lease, want time.Duration
	}{
		{MinLease, giveUpFloor},
		{2 * time.Second, giveUpFloor},
		{4 * time.Second, giveUpFloor},
		{8 * time.Second, 400 * time.Millisecond},
		{10 * time.Second, 500 * time.Millisecond},
	} {
		got := giveUpMargin(tc.lease)
		if got != tc.want {
			t.Errorf("lease %v: margin %v, want %v", tc.lease, got, tc.want)
		}
		if renew := tc.lease / renewalsPerLease; 2*renew >= tc.lease-got {
			t.Errorf("lease %v: gives up %v after the last renewal, before two renewals %v apart could fail", tc.lease, tc.lease-got, renew)
		}
	}
}
