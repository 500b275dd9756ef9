package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

// The mntr counters the bench reads. ZooKeeper 3.6+ keeps one summary per
// watch event type; every time a change triggers watches, the server adds
// the number of watchers it notified to the summary, so the _sum_ field is
// the total number of watchers fired for that event type on that member
// (each member fires the watches of the sessions connected to it, hence the
// sum over members). zk_watch_count, by contrast, is a gauge of watches
// currently set, and the _cnt_ fields count trigger calls, not watchers.
var watchFiredKeys = []string{
	"zk_sum_node_created_watch_count",
	"zk_sum_node_deleted_watch_count",
	"zk_sum_node_changed_watch_count",
	"zk_sum_node_children_watch_count",
}

const (
	proposalKey        = "zk_proposal_count" // the leader's count of proposals (quorum writes)
	packetsReceivedKey = "zk_packets_received"
	packetsSentKey     = "zk_packets_sent"
)

// ServerCounts is what the servers themselves counted during a run: the
// difference of their mntr counters after and before it.
type ServerCounts struct {
	// WatchersFired is the number of watchers notified, summed over every
	// member and every watch event type.
	WatchersFired int64
	// WatchersByType splits WatchersFired by mntr key.
	WatchersByType map[string]int64
	// Proposals is the leader's zk_proposal_count delta: every transaction
	// the quorum agreed on (creates, deletes, setData, failed creates,
	// session creates and closes).
	Proposals int64
	// PacketsReceived and PacketsSent are summed over every member.
	PacketsReceived, PacketsSent int64
}

// snapshot is one reading of every member's counters.
type snapshot struct {
	leader  int
	members []ensemble.Metrics
}

// takeSnapshot reads mntr from every server and finds the leader (or the
// standalone server) with srvr.
func takeSnapshot(servers []string) (snapshot, error) {
	s := snapshot{leader: -1}
	for i, addr := range servers {
		st, err := ensemble.ServerStatus(addr)
		if err != nil {
			return s, err
		}
		if st.Mode == "leader" || st.Mode == "standalone" {
			s.leader = i
		}
		m, err := ensemble.MntrAt(addr)
		if err != nil {
			return s, err
		}
		s.members = append(s.members, m)
	}
	if s.leader < 0 {
		return s, fmt.Errorf("bench: no leader among %v", servers)
	}
	return s, nil
}

// diff returns after minus before. It fails when the leader changed or a
// counter is missing (a server too old to report watch summaries).
func diff(before, after snapshot) (ServerCounts, error) {
	var c ServerCounts
	if before.leader != after.leader {
		return c, fmt.Errorf("bench: leader changed during the run (member %d -> %d)", before.leader, after.leader)
	}
	get := func(s snapshot, i int, key string) (int64, error) { return s.members[i].Int(key) }
	delta := func(i int, key string) (int64, error) {
		b, err := get(before, i, key)
		if err != nil {
			return 0, err
		}
		a, err := get(after, i, key)
		if err != nil {
			return 0, err
		}
		return a - b, nil
	}
	c.WatchersByType = map[string]int64{}
	for i := range before.members {
		for _, k := range watchFiredKeys {
			d, err := delta(i, k)
			if err != nil {
				return c, err
			}
			c.WatchersByType[k] += d
			c.WatchersFired += d
		}
		d, err := delta(i, packetsReceivedKey)
		if err != nil {
			return c, err
		}
		c.PacketsReceived += d
		if d, err = delta(i, packetsSentKey); err != nil {
			return c, err
		}
		c.PacketsSent += d
	}
	d, err := delta(before.leader, proposalKey)
	if err != nil {
		return c, err
	}
	c.Proposals = d
	return c, nil
}

// settle waits until every member has applied the same last transaction,
// so that counters read next include the watches the last write fired on
// every member. It gives up quietly after a second.
func settle(ctx context.Context, servers []string) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var zxid int64 = -1
		same := true
		for _, addr := range servers {
			st, err := ensemble.ServerStatus(addr)
			if err != nil {
				return
			}
			if zxid >= 0 && st.Zxid != zxid {
				same = false
			}
			zxid = st.Zxid
		}
		if same {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ServerSnapshot is one reading of every member's mntr counters, for tools
// that count a stretch of activity of their own (zklocks demo herd).
type ServerSnapshot struct{ s snapshot }

// ReadServers reads srvr and mntr from every server. It fails when a
// member does not answer or none of them is the leader.
func ReadServers(servers []string) (ServerSnapshot, error) {
	s, err := takeSnapshot(servers)
	return ServerSnapshot{s}, err
}

// Since returns what the servers counted between before and s. It fails
// when the leader changed in between or a counter is missing.
func (s ServerSnapshot) Since(before ServerSnapshot) (ServerCounts, error) {
	return diff(before.s, s.s)
}
