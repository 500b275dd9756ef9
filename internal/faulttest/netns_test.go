package faulttest

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/netns"
	"github.com/zklocks/zklocks/internal/zktest"
)

// The namespace re-runs of the fault scenarios (internal/netns: members
// and clients in network namespaces of their own, cuts made by nftables
// rules) run once, for the sequential lock, by default: they must keep
// make test's time. For the figures of docs/results/faults.md:
//
//	go test ./internal/faulttest -run Netns -netns.runs=5 -netns.variants=all -v | grep CUTREPORT
var (
	netnsRuns     = flag.Int("netns.runs", envInt("ZKLOCKS_NETNS_RUNS", 1), "how many times each namespace scenario runs (env ZKLOCKS_NETNS_RUNS)")
	netnsVariants = flag.String("netns.variants", envOr("ZKLOCKS_NETNS_VARIANTS", "sequential"), "the variants the namespace scenarios run, comma-separated, or all (env ZKLOCKS_NETNS_VARIANTS)")
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// forNetnsVariants runs fn for each variant -netns.variants names, in
// turn, -netns.runs times.
func forNetnsVariants(t *testing.T, fn func(t *testing.T, v *variant)) {
	t.Helper()
	names := strings.Split(*netnsVariants, ",")
	for run := 1; run <= *netnsRuns; run++ {
		for _, v := range variants {
			if *netnsVariants != "all" && !slices.Contains(names, v.name) {
				continue
			}
			name := v.name
			if *netnsRuns > 1 {
				name = fmt.Sprintf("%s/run-%d", v.name, run)
			}
			t.Run(name, func(t *testing.T) { fn(t, v) })
		}
	}
}

// TestNetnsHolderOnFollowerCutRightAfterItsSync is
// TestHolderOnFollowerCutRightAfterItsSync with the kernel's cut: every
// member and client in a network namespace of its own, the follower cut
// from the other two members by nftables drop rules (quorum and election
// ports alike) right after the holder's sync was answered. No relay
// stands between the members, so none can pass a close across the cut;
// the holder's TCP stack is the kernel's, in its own namespace.
func TestNetnsHolderOnFollowerCutRightAfterItsSync(t *testing.T) {
	const fastTick = 100 * time.Millisecond
	e := netns.ForTest(t, func(c *ensemble.Config) { c.TickTime = fastTick })
	env := netnsEnv(e)
	for _, ticks := range []int{20, 30} {
		st := time.Duration(ticks) * fastTick
		t.Run(fmt.Sprintf("%d-ticks", ticks), func(t *testing.T) {
			forNetnsVariants(t, func(t *testing.T, v *variant) {
				testCutRightAfterSync(t, env, v, ticks, st)
			})
		})
	}
}

// TestNetnsIsolatedMemberWithItsHolder is TestIsolatedMemberWithItsHolder
// with the kernel's cut: the holder's member (the leader, or a follower)
// cut from the other two by reject rules that answer every segment with
// a reset, election ports included; the holder keeps its link to its
// member, the waiter and the admin session are on the majority's side.
func TestNetnsIsolatedMemberWithItsHolder(t *testing.T) {
	e := netns.ForTest(t, func(c *ensemble.Config) { c.LastJoinsLate = true })
	env := netnsEnv(e)
	for _, leads := range []bool{true, false} {
		name := map[bool]string{true: "leader", false: "follower"}[leads]
		t.Run(name, func(t *testing.T) {
			testCutHolderIn(t, "netns-isolated-"+name+"-with-holder", isolateHoldersMemberIn(env, leads, e.Partition))
		})
	}
	t.Run("follower-silent", func(t *testing.T) {
		testCutHolderIn(t, "netns-isolated-follower-with-holder-silent", isolateHoldersMemberIn(env, false, e.PartitionSilently))
	})
}

// testCutHolderIn is testCutHolder over the variants -netns.variants
// names, -netns.runs times.
func testCutHolderIn(t *testing.T, fault string, setup func(t *testing.T) isolation) {
	forNetnsVariants(t, func(t *testing.T, v *variant) {
		testCutHolderVariant(t, fault, v, setup)
	})
}

// TestNetnsElectionFailoverPartitioned is TestElectionFailover's
// partitioned leader with the kernel's cut: the leader's client, in a
// namespace of its own, has every packet from and to the three members
// dropped (the in-process Cutter's Silence stood for it), and the
// follower, in another, must lead no sooner than the leader's session
// can have ended, after the old leader's Done closed.
func TestNetnsElectionFailoverPartitioned(t *testing.T) {
	e := netns.ForTest(t)
	env := netnsEnv(e)
	forNetnsRuns(t, func(t *testing.T) {
		ctx := testCtx(t, 60*time.Second)
		opts := func(name string) []clientOpt {
			return []clientOpt{withServers(e.Servers()...), withDialer(env.dialer(t, name))}
		}
		r := &failoverRun{t: t, how: "partitioned-netns", v: variantNamed("election"), st: expiryTimeout,
			tp: newTape(), path: zktest.LockPath(t), ctx: ctx, opts: opts,
			admin: zktest.Connect(t, zktest.WithServers(e.Servers()), zktest.WithDialer(env.dialer(t, "admin")))}
		leaderNode := env.node(t, "leader")
		losePartitionedBy(r, opts("leader"),
			func(*client) {
				t.Cleanup(func() { _ = e.Heal() })
				if err := e.Net.Cut(ctx, netns.Cut{From: []*netns.Node{leaderNode}, To: e.Members}); err != nil {
					t.Fatal(err)
				}
			},
			func(*client) {
				if err := e.Heal(); err != nil {
					t.Fatal(err)
				}
			})
	})
}

// forNetnsRuns runs fn -netns.runs times (as subtests run-1, ... when
// more than once).
func forNetnsRuns(t *testing.T, fn func(t *testing.T)) {
	if *netnsRuns == 1 {
		fn(t)
		return
	}
	for run := 1; run <= *netnsRuns; run++ {
		t.Run(fmt.Sprintf("run-%d", run), fn)
	}
}

// TestNetnsRandomHalves is TestRandomHalves with the kernel's cuts: every
// few seconds a random member is cut from the other two by reject rules
// (a reset for every segment, election ports included), or the ensemble
// is healed, while contenders of every lock, dialing from a namespace of
// their own, cycle. It takes about a minute, so it runs only when asked:
// -netns.runs above 1, or ZKLOCKS_NETNS_LONG=1.
func TestNetnsRandomHalves(t *testing.T) {
	if *netnsRuns <= 1 && os.Getenv("ZKLOCKS_NETNS_LONG") == "" {
		t.Skip("about a minute: run with -netns.runs=5 or ZKLOCKS_NETNS_LONG=1")
	}
	e := netns.ForTest(t, func(c *ensemble.Config) { c.LastJoinsLate = true })
	env := netnsEnv(e)
	forNetnsRuns(t, func(t *testing.T) {
		testRandomHalves(t, e, env.dialer(t, "contenders"), "netns-random-halves")
	})
}
