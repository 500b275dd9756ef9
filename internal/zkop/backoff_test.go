package zkop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zkop"
)

// The pauses double from the first up to the cap, and stay there.
func TestBackoffDoublesUpToItsCap(t *testing.T) {
	var b zkop.Backoff
	want := []time.Duration{20, 40, 80, 160, 320, 500, 500, 500}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Errorf("pause %d = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if b.Failures() != len(want) {
		t.Errorf("Failures = %d, want %d", b.Failures(), len(want))
	}
	for range 100 { // no overflow of the shift however long an outage lasts
		if d := b.Next(); d != zkop.BackoffMax {
			t.Fatalf("pause after many failures = %v, want %v", d, zkop.BackoffMax)
		}
	}
}

// Sleep gives up at once when ctx has ended, and still counts the failure.
func TestBackoffSleepHonoursCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b zkop.Backoff
	if err := b.Sleep(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a done ctx = %v, want context.Canceled", err)
	}
	if b.Failures() != 1 {
		t.Errorf("Failures = %d, want 1", b.Failures())
	}
}
