package timeout

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
)

// LockTimeout calls an error the wait bound's only when it is the bound's
// deadline: a loss that happens to come back as the bound passes keeps its
// own name.
func TestBoundPassedNamesOnlyTheBoundsOwnDeadline(t *testing.T) {
	const d = 2 * time.Second
	deadline := fmt.Errorf("wait: %w", context.DeadlineExceeded)
	lost := fmt.Errorf("%w: our node was deleted", zklocks.ErrLockLost)
	for _, tc := range []struct {
		name        string
		err, cause  error
		wantTimeout bool
		wantLost    bool
	}{
		{"the bound passed", deadline, ErrWaitTimeout, true, false},
		{"our node deleted just before the bound", lost, ErrWaitTimeout, false, true},
		{"the caller's own deadline", deadline, context.DeadlineExceeded, false, false},
		{"success", nil, ErrWaitTimeout, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := boundPassed(tc.err, tc.cause, d)
			if errors.Is(got, ErrWaitTimeout) != tc.wantTimeout || errors.Is(got, zklocks.ErrLockLost) != tc.wantLost {
				t.Errorf("boundPassed(%v, cause %v) = %v; ErrWaitTimeout %v (want %v), zklocks.ErrLockLost %v (want %v)",
					tc.err, tc.cause, got, errors.Is(got, ErrWaitTimeout), tc.wantTimeout, errors.Is(got, zklocks.ErrLockLost), tc.wantLost)
			}
			if tc.err == nil && got != nil {
				t.Errorf("boundPassed(nil) = %v", got)
			}
		})
	}
}
