package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
)

// watchInspect runs inspect -watch with args until stop returns true for
// what it has printed, then cancels it like Ctrl-C, and returns the output
// and what the command returned.
func watchInspect(t *testing.T, ctx context.Context, stop func(out string) bool, args ...string) (string, error) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runInspect(wctx, append([]string{"-watch", "-interval=100ms", serversFlag(t)}, args...), &out, &errOut)
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !stop(out.String()) {
		select {
		case err := <-done:
			t.Fatalf("inspect -watch returned before it was interrupted: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		case <-ctx.Done():
			t.Fatalf("inspect -watch: never printed what the test waits for\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		case <-tick.C:
		}
	}
	cancel()
	select {
	case err := <-done:
		assert.Empty(t, errOut.String())
		return out.String(), err
	case <-ctx.Done():
		t.Fatal("inspect -watch did not return after it was interrupted")
		return "", nil
	}
}

func TestInspectWatchRefreshesUntilInterrupted(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	path, ctx, m := heldLock(t, 30*time.Second)
	token := fmt.Sprint(m.Token())

	// Text: a separator line before each refresh, no terminal codes; a
	// release between two refreshes shows up in the next one.
	released := false
	out, err := watchInspect(t, ctx, func(out string) bool {
		if !released && strings.Count(out, "---- refresh ") >= 2 {
			require.NoError(t, m.Unlock(ctx))
			released = true
		}
		return released && strings.Contains(out, path+": free (no contenders)")
	}, path)
	require.NoError(t, err, "an interrupt ends -watch without an error")
	refreshes := strings.Split(out, "---- refresh ")[1:]
	require.GreaterOrEqual(t, len(refreshes), 3, out)
	assert.True(t, strings.HasPrefix(refreshes[0], "1, every 100ms (Ctrl-C stops) ----\n"), refreshes[0])
	assert.True(t, strings.HasPrefix(refreshes[1], "2, every 100ms"), refreshes[1])
	assert.Contains(t, refreshes[0], token, "the first refresh shows the holder")
	assert.Contains(t, refreshes[len(refreshes)-1], "free (no contenders)")
	assert.NotContains(t, out, "\x1b", "no ANSI escape codes")

	// JSON: one report per line.
	out, err = watchInspect(t, ctx, func(out string) bool { return strings.Count(out, "\n") >= 2 }, "-json", path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	for _, line := range lines {
		rep := decodeReport(t, []byte(line))
		require.Len(t, rep.Locks, 1)
		assert.Equal(t, path, rep.Locks[0].Path)
	}
}
