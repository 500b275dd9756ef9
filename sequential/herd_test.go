package sequential_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// watchCounters are the mntr summaries to which ZooKeeper (3.6+) adds the
// number of watchers it notified each time a change triggers watches.
var watchCounters = []string{
	"zk_sum_node_created_watch_count",
	"zk_sum_node_deleted_watch_count",
	"zk_sum_node_changed_watch_count",
	"zk_sum_node_children_watch_count",
}

// serverCounters reads, from every member, the watchers fired so far (by
// counter name, summed over members) and the leader's proposals.
func serverCounters(t *testing.T, e *ensemble.Ensemble) (fired map[string]int64, proposals int64) {
	t.Helper()
	leader, err := e.Leader()
	require.NoError(t, err)
	fired = map[string]int64{}
	for i := range e.Size() {
		m, err := e.Mntr(i)
		require.NoError(t, err)
		for _, k := range watchCounters {
			v, err := m.Int(k)
			require.NoError(t, err)
			fired[k] += v
		}
		if i == leader {
			proposals, err = m.Int("zk_proposal_count")
			require.NoError(t, err)
		}
	}
	return fired, proposals
}

// TestHerdFigures measures, with the servers' own counters, what one
// release costs with 16 contenders each on its own session: the watchers
// ZooKeeper fires per release and the quorum writes per acquisition.
//
// Per release two watchers fire, both data watches on the deleted node:
// the successor's (the one wake-up of the recipe: no herd) and the
// releasing holder's own, which its hold monitor keeps to notice a loss
// and which go-zookeeper v1.0.4 can not remove before the delete (it has
// no removeWatches). Only the successor is woken: the waiters' Stats count
// one notification per release. Per acquisition the quorum writes twice:
// the create and the delete of its node.
func TestHerdFigures(t *testing.T) {
	e := zktest.Ensemble(t) // skips under ZK_SERVERS: it needs every member's mntr, and no other traffic
	const contenders, rounds = 16, 10
	ctx := testContext(t, 2*time.Minute)
	path := zktest.LockPath(t)
	ms := make([]*sequential.Mutex, contenders)
	for i := range ms {
		ms[i] = newContender(t, path).m
	}
	// Create the lock path before measuring.
	require.NoError(t, ms[0].Lock(ctx))
	require.NoError(t, ms[0].Unlock(ctx))
	base := ms[0].Stats()

	firedBefore, propBefore := serverCounters(t, e)
	start := time.Now()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := m.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				if err := m.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	firedAfter, propAfter := serverCounters(t, e)

	acq := float64(contenders * rounds)
	var fired int64
	var parts []string
	for _, k := range watchCounters {
		d := firedAfter[k] - firedBefore[k]
		fired += d
		parts = append(parts, strings.TrimSuffix(strings.TrimPrefix(k, "zk_sum_node_"), "_watch_count")+"="+strconv.FormatInt(d, 10))
	}
	var notified int64
	for i, m := range ms {
		notified += m.Stats().Notifications
		if i == 0 {
			notified -= base.Notifications
		}
	}
	watchersPerRelease := float64(fired) / acq
	writesPerAcq := float64(propAfter-propBefore) / acq
	notifiedPerRelease := float64(notified) / acq
	t.Logf("%d contenders x %d rounds in %v (%.0f acquisitions/s)", contenders, rounds, took.Round(time.Millisecond), acq/took.Seconds())
	t.Logf("watchers fired per release: %.2f (%s, all members); clients notified per release: %.2f; quorum writes per acquisition: %.2f (leader's zk_proposal_count +%d)",
		watchersPerRelease, strings.Join(parts, " "), notifiedPerRelease, writesPerAcq, propAfter-propBefore)

	assert.InDelta(t, 2.0, watchersPerRelease, 0.2, "the successor's watch and the holder's own")
	assert.InDelta(t, 1.0, notifiedPerRelease, 0.1, "one waiter woken per release")
	assert.InDelta(t, 2.0, writesPerAcq, 0.15, "create and delete")
}
