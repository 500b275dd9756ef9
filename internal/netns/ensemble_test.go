package netns

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zktest"
)

// modes returns each member's mode as its mntr says (the ensemble asks
// from the admin node), "electing" while it has no quorum and "-" when
// it does not answer.
func modes(e *Ensemble) []string {
	out := make([]string, len(e.Members))
	for i := range e.Members {
		out[i] = "-"
		if m, err := e.Mntr(i); err == nil {
			out[i] = m["zk_server_state"]
			if out[i] == "" || out[i] == "looking" {
				out[i] = "electing"
			}
		}
	}
	return out
}

// waitModes polls until ok accepts the members' modes, or fails t at ctx's
// end.
func waitModes(ctx context.Context, t *testing.T, e *Ensemble, what string, ok func(m []string) bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		m := modes(e)
		if ok(m) {
			return time.Since(start)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: members still %v after %v", what, m, time.Since(start).Round(time.Millisecond))
		case <-tick.C:
		}
	}
}

func servingAll(m []string) bool {
	leaders := 0
	for _, s := range m {
		switch s {
		case "leader":
			leaders++
		case "follower":
		default:
			return false
		}
	}
	return leaders == 1
}

// sessionEvents connects a client from node nd to servers and returns
// the connection and its session events.
func sessionEvents(t *testing.T, nd *Node, servers []string, st time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	events := make(chan zk.Event, 64)
	conn := zktest.Connect(t, zktest.WithServers(servers), zktest.WithDialer(nd.DialTimeout),
		zktest.WithSessionTimeout(st), zktest.WithEvents(events))
	return conn, events
}

// waitState waits for a session event of state s.
func waitState(t *testing.T, events <-chan zk.Event, s zk.State, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == s {
				return time.Since(start)
			}
		case <-timer.C:
			t.Fatalf("no %v within %v", s, within)
		}
	}
}

// TestEnsembleInNamespaces runs a three-member ensemble, each member in a
// namespace of its own, and cuts it with the kernel: an isolated leader
// (its quorum and election ports with it, no relay in between), then a
// client cut from its member, silently and loudly, while the members
// still see each other.
func TestEnsembleInNamespaces(t *testing.T) {
	e := ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.Net.CheckIsolated(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range e.Servers() {
		t.Logf("member at %s", s)
	}
	waitModes(ctx, t, e, "start", servingAll)

	t.Run("isolated leader", func(t *testing.T) {
		t.Cleanup(func() { _ = e.Heal() })
		leader, err := e.Leader()
		if err != nil {
			t.Fatal(err)
		}
		var others []int
		for i := range e.Members {
			if i != leader {
				others = append(others, i)
			}
		}
		if err := e.PartitionSilently([]int{leader}, others); err != nil {
			t.Fatal(err)
		}
		took := waitModes(ctx, t, e, "after the cut", func(m []string) bool {
			return m[leader] != "leader" && (m[others[0]] == "leader") != (m[others[1]] == "leader")
		})
		t.Logf("leader %d cut off (its election port too): the others elected one of theirs in %v; modes %v",
			leader, took.Round(time.Millisecond), modes(e))
		if err := e.Heal(); err != nil {
			t.Fatal(err)
		}
		took = waitModes(ctx, t, e, "after the heal", servingAll)
		t.Logf("healed: all three serve again in %v", took.Round(time.Millisecond))
	})

	for _, loud := range []bool{false, true} {
		name := map[bool]string{false: "client cut silently", true: "client cut loudly"}[loud]
		t.Run(name, func(t *testing.T) {
			t.Cleanup(func() { _ = e.Heal() })
			client, err := e.Client(ctx, fmt.Sprintf("client-%v", loud))
			if err != nil {
				t.Fatal(err)
			}
			leader, err := e.Leader()
			if err != nil {
				t.Fatal(err)
			}
			f := (leader + 1) % len(e.Members)
			const st = 2 * time.Second
			conn, events := sessionEvents(t, client, e.Servers()[f:f+1], st)
			if _, err := conn.Sync("/"); err != nil {
				t.Fatal(err)
			}
			cut := Cut{From: []*Node{client}, To: []*Node{e.Members[f]}, Loud: loud}
			if err := e.Net.Cut(ctx, cut); err != nil {
				t.Fatal(err)
			}
			took := waitState(t, events, zk.StateDisconnected, 2*st)
			t.Logf("%v: the client lost its connection %v after the cut", cut, took.Round(time.Millisecond))
			if loud && took > st/3 {
				t.Errorf("a loud cut took %v to show; want well under a ping interval (%v)", took, st/3)
			}
			if !loud && took < st/2 {
				t.Errorf("a silent cut showed after %v; want the client's read timeout (2/3 of %v)", took, st)
			}
			if m := modes(e); !servingAll(m) {
				t.Errorf("members %v while only the client was cut; want all serving", m)
			}
			if err := e.Heal(); err != nil {
				t.Fatal(err)
			}
			ev := waitAny(t, events, 3*st, zk.StateHasSession, zk.StateExpired)
			t.Logf("healed at once: %v", ev)
		})
	}
}

// waitAny waits for a session event of one of states.
func waitAny(t *testing.T, events <-chan zk.Event, within time.Duration, states ...zk.State) zk.State {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && slices.Contains(states, ev.State) {
				return ev.State
			}
		case <-timer.C:
			t.Fatalf("none of %v within %v", states, within)
			return 0
		}
	}
}
