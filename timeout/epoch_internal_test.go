package timeout

import (
	"testing"

	"github.com/go-zookeeper/zk"
)

// The judge compares the head's last stamp with its own probe, two mtimes
// of ZooKeeper's. Each is stamped by the leader of its epoch, by that
// leader's clock: across a leader change they are not comparable. Here
// the old leader's clock ran 5s behind the new one's: the head renewed
// 500ms ago, but by the old clock, so its mtime reads 5.5s old. The judge
// must not evict it; once the head stops renewing, it must evict it within
// one lease of its first probe in the new epoch.
func TestJudgeComparesMtimesOfOneEpochOnly(t *testing.T) {
	const lease = int64(1000) // ms
	epoch := func(e int64) int64 { return e << 32 }
	const (
		oldEpoch = 4
		newEpoch = 5
		skew     = int64(5000) // the old leader's clock, behind the new one's
	)
	renewedAt := int64(100_000) // true time of the head's last renewal, under the old leader
	head := &zk.Stat{Mtime: renewedAt - skew, Mzxid: epoch(oldEpoch) | 42}

	for _, tc := range []struct {
		name      string
		probes    []int64 // the judge's probes in the new epoch, by the new leader's (true) clock
		wantEvict bool
	}{
		{"live head, first probe after the change", []int64{renewedAt + 500}, false},
		{"stopped head, within a lease of the first probe", []int64{renewedAt + 500, renewedAt + 1400}, false},
		{"stopped head, a lease after the first probe", []int64{renewedAt + 500, renewedAt + 1500}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &judge{epoch: oldEpoch, epochSince: renewedAt - skew - 10_000}
			var p int64
			for _, p = range tc.probes {
				c.enterEpoch(newEpoch, p)
				if c.since == 0 {
					c.since = p
				}
			}
			start, ok := c.start(true, head)
			evict := ok && start+lease-p <= 0
			if evict != tc.wantEvict {
				t.Errorf("probe at %d (first in the epoch %d), head stamped %d under the old leader: evict %v, want %v",
					p, c.epochSince, head.Mtime, evict, tc.wantEvict)
			}
		})
	}

	t.Run("same epoch: the head's own mtime", func(t *testing.T) {
		c := &judge{epoch: newEpoch, epochSince: 1}
		same := &zk.Stat{Mtime: 7000, Mzxid: epoch(newEpoch) | 9}
		if got, ok := c.start(true, same); !ok || got != 7000 {
			t.Errorf("start = %d, %v; want the head's mtime 7000", got, ok)
		}
	})

	// The judge's probe was answered by the old leader, and its read of
	// the head, queued across the leader change, by a member of the new
	// epoch that has the head's renewal: a fresh mtime by a clock 5s
	// ahead of the probe's. Counting from the judge's first probe of the
	// old epoch would evict the live head; the judge must probe again.
	t.Run("head stamped by a newer leader than the probe: not judged", func(t *testing.T) {
		c := &judge{epoch: oldEpoch, epochSince: 1}
		newer := &zk.Stat{Mtime: renewedAt + skew, Mzxid: epoch(newEpoch) | 3}
		if got, ok := c.start(true, newer); ok {
			t.Errorf("start = %d, ok; want not comparable", got)
		}
	})
}
