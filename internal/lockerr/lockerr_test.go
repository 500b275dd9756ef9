package lockerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
)

func TestWrapPrefixesOnce(t *testing.T) {
	err := Wrap("x", "lock", "/a", fmt.Errorf("watch %s: %w", "/a/n", zk.ErrNoAuth))
	assert.EqualError(t, err, "x: lock /a: watch /a/n: zk: not authenticated")
	assert.ErrorIs(t, err, zk.ErrNoAuth)
	assert.Same(t, err, Wrap("x", "unlock", "/a", err), "an error with our prefix is not wrapped again")
	assert.NoError(t, Wrap("x", "lock", "/a", nil))
	assert.ErrorIs(t, Wrap("x", "lock", "/a", context.Canceled), context.Canceled)
}

// Whichever request met the session's expiry, the caller sees a lost lock.
func TestLostSaysLostForEveryExpiry(t *testing.T) {
	lost := fmt.Errorf("x: lock lost")
	for _, tc := range []struct {
		name     string
		err      error
		wantLost bool
	}{
		{"a listing", fmt.Errorf("list: %w", zk.ErrSessionExpired), true},
		{"a lease write", fmt.Errorf("stamping the lease: %w", zk.ErrSessionExpired), true},
		{"already lost", fmt.Errorf("%w: %w", lost, zk.ErrSessionExpired), true},
		{"an outage", fmt.Errorf("create: %w", zk.ErrNoServer), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Lost(tc.err, lost)
			if errors.Is(got, lost) != tc.wantLost {
				t.Errorf("Lost(%v) = %v; errors.Is(lost) = %v, want %v", tc.err, got, errors.Is(got, lost), tc.wantLost)
			}
			if tc.err != nil && !errors.Is(got, tc.err) {
				t.Errorf("Lost(%v) = %v no longer wraps the cause", tc.err, got)
			}
		})
	}
}
