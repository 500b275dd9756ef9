package rivals

import (
	"context"
	"testing"
	"time"
)

// TestRunRound: a short round of three Redis clients yields every
// figure, a handoff included; one contender yields no handoff.
func TestRunRound(t *testing.T) {
	verifyNoLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	addr := redisServerFor(t).Addr
	var ls []Locker
	for range 3 {
		ls = append(ls, closeLater(t, NewRedisLock(addr, lockName(t), Options{})))
	}
	f, err := RunRound(ctx, ls, RoundConfig{Duration: 300 * time.Millisecond, Hold: time.Millisecond, Idle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f.Acquisitions < 3 || f.Elapsed < 300*time.Millisecond || f.AcquireP50 <= 0 || f.HandoffP50 <= 0 || f.HandoffP99 < f.HandoffP50 ||
		f.TopShare < 1.0/3 || f.TopShare > 1 {
		t.Fatalf("figures of a contended round: %+v", f)
	}
	f, err = RunRound(ctx, ls[:1], RoundConfig{Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f.Acquisitions == 0 || f.HandoffP50 != 0 || f.TopShare != 1 {
		t.Fatalf("figures of a lone contender: %+v", f)
	}
}
