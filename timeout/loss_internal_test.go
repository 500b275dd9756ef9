package timeout

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
)

// A failed renewal or lease check names the loss it really is: a session
// that ended is not an eviction, and every loss is zklocks.ErrLockLost.
func TestLossesAreNamedForWhatTheyAre(t *testing.T) {
	for _, tc := range []struct {
		name            string
		err             func() error
		lost, evicted   bool
		sessionExpiring bool
	}{
		{"renewal: node gone", func() error { return renewalLoss(zk.ErrNoNode, false) }, true, true, false},
		{"renewal: written by another", func() error { return renewalLoss(zk.ErrBadVersion, false) }, true, true, false},
		{"renewal: node gone with a new session", func() error { return renewalLoss(zk.ErrNoNode, true) }, true, false, true},
		{"renewal: session expired", func() error { return renewalLoss(zk.ErrSessionExpired, false) }, true, false, true},
		{"renewal: connection lost", func() error { return renewalLoss(zk.ErrConnectionClosed, false) }, false, false, false},
		{"lease check: session expired", func() error {
			_, err := (&judge{}).failed(context.Background(), "read the head", zk.ErrSessionExpired, true)
			return err
		}, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if got := errors.Is(err, zklocks.ErrLockLost); got != tc.lost {
				t.Errorf("%v: zklocks.ErrLockLost %v, want %v", err, got, tc.lost)
			}
			if got := errors.Is(err, ErrEvicted); got != tc.evicted {
				t.Errorf("%v: ErrEvicted %v, want %v", err, got, tc.evicted)
			}
			if tc.sessionExpiring && !errors.Is(err, hold.ErrSessionExpired) {
				t.Errorf("%v: want the reason to say the session expired", err)
			}
		})
	}
}
