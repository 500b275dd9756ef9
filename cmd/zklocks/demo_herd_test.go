package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
)

// TestDemoHerd runs the herd demo headless with each lock and checks every
// handoff against what the recipes do:
//
//   - naive: every waiter watches the lock node (exists), so a release
//     wakes all of them; each tries its create again, one wins.
//   - sequential: every waiter watches its predecessor only, so a release
//     wakes the first waiter, which takes the lock (FIFO).
//   - both: the releaser's own data watch (behind Done) fires on its own
//     delete; its session gets that event, its lock no longer counts it
//     (it stops listening before the delete).
//
// The servers' view is checked twice: before each release, the watches
// wchc lists on the node being released must be exactly the events the
// release delivers; over the run, mntr's watchers fired and the leader's
// proposals must match the clients' counts and the writes the recipes
// make. The mntr figures are global, so they are compared exactly only on
// the test binary's own ensemble; a shared one (ZK_SERVERS) has other
// clients, whose traffic can only add to them.
func TestDemoHerd(t *testing.T) {
	zktest.VerifyNoLeaks(t)
	servers := zktest.Servers(t)
	ownEnsemble := strings.TrimSpace(os.Getenv("ZK_SERVERS")) == ""
	const n, rounds = 4, 8
	tests := []struct {
		variant string
		// wakes is who a release wakes, given who waits (in queue order).
		wakes func(waiting []int) []int
		// writes is the run's quorum writes, given the waiters of each
		// release: a create and a delete per acquisition, and for naive a
		// failed create (NodeExists, a logged transaction) per waiter woken.
		writes func(waiting []int) int64
	}{
		{"naive",
			func(waiting []int) []int { return waiting },
			func(waiting []int) int64 { return 2*rounds + sumInts(waiting) }},
		{"sequential",
			func(waiting []int) []int { return waiting[:min(len(waiting), 1)] },
			func([]int) int64 { return 2 * rounds }},
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sum, err := playHerd(ctx, herdConfig{Servers: servers, Variant: tc.variant,
				Contenders: n, Acquisitions: rounds, Session: 10 * time.Second})
			require.NoError(t, err)
			require.Len(t, sum.Releases, rounds)

			var waiting []int
			var events int64
			for k, rel := range sum.Releases {
				// Every contender queues until rounds Lock calls are made;
				// then the queue drains.
				require.Len(t, rel.Waiting, min(n-1, rounds-rel.Round), "release %d: waiters", rel.Round)
				assert.Equal(t, nilIfEmpty(tc.wakes(rel.Waiting)), rel.Woken, "release %d: woken", rel.Round)
				if len(rel.Woken) > 0 && tc.variant == "sequential" {
					assert.Equal(t, rel.Woken[0], rel.Holder, "release %d: the woken one holds next", rel.Round)
				}
				if k > 0 {
					assert.Equal(t, sum.Releases[k-1].Holder, rel.Releaser, "release %d: releaser", rel.Round)
				}
				assert.EqualValues(t, 1, rel.OwnEvents, "release %d: the releaser's own-node event", rel.Round)
				wake := int64(len(rel.Woken)) // one event per woken waiter
				assert.Equal(t, wake+1, rel.Events, "release %d: events", rel.Round)
				assert.Equal(t, wake, rel.Notifications, "release %d: the locks' count", rel.Round)
				assert.EqualValues(t, rel.Watching, rel.Events, "release %d: watches wchc listed before it", rel.Round)
				waiting = append(waiting, len(rel.Waiting))
				events += rel.Events
			}
			assert.Equal(t, -1, sum.Releases[rounds-1].Holder)
			assert.Equal(t, events, sum.Events, "events over the run")
			assert.Equal(t, sum.Events-rounds, sum.Notifications, "the locks miss one own-node event per release")

			wantWrites := tc.writes(waiting)
			if ownEnsemble {
				assert.Equal(t, sum.Events, sum.Server.WatchersFired, "watchers the servers fired")
				assert.Equal(t, sum.Events, sum.Server.WatchersByType["zk_sum_node_deleted_watch_count"], "all of them by deletes")
				assert.Equal(t, wantWrites, sum.Server.Proposals, "quorum writes")
			} else {
				assert.GreaterOrEqual(t, sum.Server.WatchersFired, sum.Events, "watchers the servers fired")
				assert.GreaterOrEqual(t, sum.Server.Proposals, wantWrites, "quorum writes")
				t.Logf("shared ensemble: servers fired %d watchers (clients got %d events), leader proposed %d (the demo made %d)",
					sum.Server.WatchersFired, sum.Events, sum.Server.Proposals, wantWrites)
			}
		})
	}
}

// TestDemoHerdCommand runs the command line and checks what it prints,
// and that the lock path is gone afterwards.
func TestDemoHerdCommand(t *testing.T) {
	servers := zktest.Servers(t)
	code, out, errOut := zklocks(t, "demo", "herd", "-servers="+strings.Join(servers, ","),
		"-variant=sequential", "-n=3", "-rounds=4", "-hold=0")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, want := range []string{
		"c1 holds; waiting: c2 c3",
		"#1   c1 released -> woken: c",
		"(1 of 2 waiting)",
		"#4   c",
		"-> woken: nobody (0 of 0 waiting) -> nobody holds",
		"Summary: the sequential lock, 3 contenders, 4 acquisitions and releases",
		"woken per release            0.75 the next in line only",
		"exactly that many events in 4 of 4 releases",
		"Compare: zklocks demo herd -variant naive -n 3",
	} {
		assert.Contains(t, out, want)
	}
	m := regexp.MustCompile(`\(lock (/zklocks-demo/herd-[0-9a-f]+)/lock\)`).FindStringSubmatch(out)
	require.NotNil(t, m, "no lock path in:\n%s", out)
	conn := zktest.Connect(t)
	_, _ = conn.Sync(m[1])
	ok, _, err := conn.Exists(m[1])
	require.NoError(t, err)
	assert.False(t, ok, "%s left behind", m[1])
}

func sumInts(xs []int) int64 {
	var t int64
	for _, x := range xs {
		t += int64(x)
	}
	return t
}

func nilIfEmpty(xs []int) []int {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
