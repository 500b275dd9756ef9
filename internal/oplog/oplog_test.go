package oplog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/liveness"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/oplog"
)

// every calls each method of g once, and of the Hold it returns.
func every(ctx context.Context, g *oplog.Log, err error) {
	since := g.Now()
	g.Wait(ctx, "/l/n1", "/l/n0", 1, 0x10)
	g.WaitBehind(ctx, "o2")
	h := g.Acquire(ctx, "/l/n1", 7, 0x10, since)
	h.Reenter(ctx, 2)
	h.Exit(ctx, 1)
	g.Evict(ctx, "/l/n1", "/l/n0", 5, time.Second, time.Millisecond)
	g.Abandon(ctx, "/l/n1", since, err)
	h.Release(ctx, nil)
	h.Lost(ctx, err)
}

// Logging off costs nothing: without a logger (New returns nil, the
// variants' "off") no event allocates. With a handler that enables no
// level, no attribute is built: only the Hold of an acquire is allocated.
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	err := errors.New("boom")
	if g := oplog.New(nil, "sequential", "/l"); g != nil {
		t.Fatal("New(nil, ...) != nil")
	}
	for _, tc := range []struct {
		name string
		log  *oplog.Log
		max  float64 // allocations per run of every event
	}{
		{"off", nil, 0},
		{"discard handler", oplog.New(slog.New(slog.DiscardHandler), "sequential", "/l").Attempt("o", time.Time{}), 1},
	} {
		if n := testing.AllocsPerRun(100, func() { every(ctx, tc.log, err) }); n > tc.max {
			t.Errorf("%s: %v allocations per run of every event, want at most %v", tc.name, n, tc.max)
		}
	}
}

// Each event has its message, level and keys, and carries lock and path
// (and owner, for an attempt with one).
func TestEvents(t *testing.T) {
	ctx := context.Background()
	rec := locktest.NewLogRecorder()
	g := oplog.New(rec.Logger(), "reentrant", "/l").Attempt("o1", time.Now())
	every(ctx, g, errors.New("boom"))

	want := []struct {
		msg   string
		level slog.Level
		keys  []string
	}{
		{oplog.MsgWait, slog.LevelDebug, []string{"node", "watch", "ahead", "session"}},
		{oplog.MsgWait, slog.LevelDebug, []string{"behind"}},
		{oplog.MsgAcquire, slog.LevelInfo, []string{"node", "token", "session", "waited"}},
		{oplog.MsgReenter, slog.LevelDebug, []string{"node", "token", "count"}},
		{oplog.MsgExit, slog.LevelDebug, []string{"node", "token", "count"}},
		{oplog.MsgEvict, slog.LevelWarn, []string{"node", "victim", "victim_token", "lease", "overdue"}},
		{oplog.MsgAbandon, slog.LevelInfo, []string{"node", "waited", "err"}},
		{oplog.MsgRelease, slog.LevelInfo, []string{"node", "token", "held"}},
		// Lost and the Hold's Abandon come after Release: dropped.
	}
	got := rec.Records()
	if len(got) != len(want) {
		t.Fatalf("records: %v, want %d", rec.Msgs(), len(want))
	}
	for i, w := range want {
		r := got[i]
		if r.Msg != w.msg || r.Level != w.level {
			t.Errorf("record %d: %s %s, want %s %s", i, r.Level, r.Msg, w.level, w.msg)
		}
		keys := append([]string{"lock", "path", "owner"}, w.keys...)
		for _, k := range keys {
			if !r.Has(k) {
				t.Errorf("record %d (%s): no key %q in %v", i, r.Msg, k, r)
			}
		}
		if len(r.Attrs) != len(keys) {
			t.Errorf("record %d (%s): keys %v, want %v", i, r.Msg, r, keys)
		}
		if r.Str("lock") != "reentrant" || r.Str("path") != "/l" || r.Str("owner") != "o1" {
			t.Errorf("record %d: %v, want lock=reentrant path=/l owner=o1", i, r)
		}
	}
	if s := got[2].Str("session"); s != "0x10" {
		t.Errorf("acquire: session %q, want 0x10", s)
	}
	if c := got[3].Int("count"); c != 2 {
		t.Errorf("reenter: count %d, want 2", c)
	}
}

// A hold ends once, whichever layer reports it first; a nil Hold is off.
func TestHoldEndsOnce(t *testing.T) {
	ctx := context.Background()
	rec := locktest.NewLogRecorder()
	g := oplog.New(rec.Logger(), "timeout", "/l")
	h := g.Acquire(ctx, "/l/n", 3, 1, time.Now())
	if g.Current() != h {
		t.Error("Current() is not the hold just acquired")
	}
	h.Lost(ctx, hold.ErrNodeDeleted)
	h.Lost(ctx, hold.ErrSessionExpired)
	h.Release(ctx, nil)
	if got := rec.Msgs(); len(got) != 2 || got[1] != oplog.MsgLost {
		t.Errorf("records %v, want acquire, lost", got)
	}
	var none *oplog.Hold
	none.Release(ctx, nil) // must not panic
}

// The reason of a loss: the variant's own causes first, then the common ones.
func TestReason(t *testing.T) {
	errEvicted := errors.New("evicted")
	g := oplog.New(slog.New(slog.DiscardHandler), "timeout", "/l",
		oplog.Reason{Err: errEvicted, Name: oplog.ReasonEvicted})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{hold.ErrNodeDeleted, oplog.ReasonNodeDeleted},
		{fmt.Errorf("lost: %w", hold.ErrSessionExpired), oplog.ReasonSessionExpired},
		{fmt.Errorf("%w: timeout", liveness.ErrCutOff), oplog.ReasonCutOff},
		{fmt.Errorf("%w: %w", errEvicted, hold.ErrNodeDeleted), oplog.ReasonEvicted},
		{zk.ErrNoNode, oplog.ReasonNodeDeleted},
		{errors.New("other"), oplog.ReasonError},
	} {
		if got := g.Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
