package faulttest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/history"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// Faults between the servers themselves: member links cut and slowed
// through the proxies of ensemble.Config.ProxiedLinks, on an ensemble of
// the test's own.

// proxiedEnsemble starts a private ensemble whose member links can be
// cut and slowed.
func proxiedEnsemble(t *testing.T) *ensemble.Ensemble {
	t.Helper()
	e := zktest.PrivateEnsemble(t, func(c *ensemble.Config) { c.ProxiedLinks, c.LastJoinsLate = true, true })
	t.Cleanup(func() { logServerTrouble(t, e) }) // before the ensemble's own clean-up removes the logs
	return e
}

// logServerTrouble logs, when the test failed, the lines of each member's
// log that tell of trouble in the servers themselves: exceptions, errors,
// and how each member synced with its leader. Twice a member has been
// seen lacking, after a sync, a node the other two had (see
// docs/reliability.md); these lines are what tells a server fault from a
// lock's.
func logServerTrouble(t *testing.T, e *ensemble.Ensemble) {
	if !t.Failed() {
		return
	}
	for _, m := range e.Members() {
		b, err := os.ReadFile(m.LogFile)
		if err != nil {
			t.Logf("member %d: %v", m.ID, err)
			continue
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if troubleRE.MatchString(l) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("member %d (%s), the last %d lines of trouble and syncs in its log:\n%s", m.ID, m.Addr, len(lines), strings.Join(lines, "\n"))
	}
}

var troubleRE = regexp.MustCompile(`Exception|ERROR|Getting a (diff|snapshot)|TRUNC|Truncating|lost|inconsisten|digest`)

// leaderAndRest returns the leader's index and the others', once the
// ensemble serves. (Before the proxies cut election links too, a cut
// leader with the largest id won every election its followers started,
// and this restarted that member until another led; see
// ensemble.Partition.)
func leaderAndRest(t *testing.T, e faultEnsemble) (int, []int) {
	t.Helper()
	if err := e.WaitServing(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	leader, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	var rest []int
	for i := range e.Size() {
		if i != leader {
			rest = append(rest, i)
		}
	}
	return leader, rest
}

func addrs(e faultEnsemble, members []int) []string {
	var out []string
	for _, i := range members {
		out = append(out, e.Servers()[i])
	}
	return out
}

// heal ends every link fault and waits until all members serve again.
func heal(t *testing.T, e faultEnsemble) {
	t.Helper()
	if err := e.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitServing(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// Split brain (docs/05-failure-modes.md), between the servers: the holder's
// client can reach only one member, and that member is cut off from the
// other two. The majority expires the holder's session (electing a new
// leader first, if the holder's member led); the waiter, on the
// majority's side, takes the lock. The holder's Done must close before
// that, its late write must be refused by the fenced store, and once
// healed nothing may be left (testCutHolder's checks). The cut is loud:
// the links close and both sides notice at once (a silent cut, see
// TestSilentlyIsolatedFollowerWithItsHolder, is another matter).
func TestIsolatedMemberWithItsHolder(t *testing.T) {
	e := proxiedEnsemble(t)
	for _, leads := range []bool{true, false} {
		name := map[bool]string{true: "leader", false: "follower"}[leads]
		t.Run(name, func(t *testing.T) {
			testCutHolder(t, "isolated-"+name+"-with-holder", true, isolateHoldersMember(e, leads, e.Partition))
		})
	}
}

// isolateHoldersMember is the isolation of testCutHolder in which the
// holder talks to the leader (leads) or a follower only, and cut cuts that
// member off from the other two.
func isolateHoldersMember(e *ensemble.Ensemble, leads bool, cut func(groups ...[]int) error) func(t *testing.T) isolation {
	return isolateHoldersMemberIn(relayEnv(e), leads, cut)
}

// isolateHoldersMemberIn is isolateHoldersMember in env: its clients dial
// as env says (from namespaces of their own, in netnsEnv).
func isolateHoldersMemberIn(env cutEnv, leads bool, cut func(groups ...[]int) error) func(t *testing.T) isolation {
	e := env.e
	return func(t *testing.T) isolation {
		leader, rest := leaderAndRest(t, e)
		member, others, lag := leader, rest, time.Duration(0)
		if !leads {
			member, others, lag = rest[0], []int{leader, rest[1]}, tick/2+expiryTimeout/8
		}
		majority := addrs(e, others)
		return isolation{
			holder: []clientOpt{withTimeout(expiryTimeout), withServers(e.Servers()[member]), withDialer(env.dialer(t, "holder"))},
			waiter: []clientOpt{withServers(majority...), withDialer(env.dialer(t, "waiter"))},
			admin:  zktest.Connect(t, zktest.WithServers(majority), zktest.WithDialer(env.dialer(t, "admin"))),
			cut: func(t *testing.T, _ *client) {
				t.Cleanup(func() { _ = e.Heal() }) // should the test stop before it heals
				if err := cut([]int{member}, others); err != nil {
					t.Fatal(err)
				}
			},
			heal:     func(t *testing.T, _ *client) { heal(t, e) },
			electing: leads,
			touchLag: lag,
		}
	}
}

// A follower cut off silently (its links to the other members deliver
// nothing, and nothing closes) goes on serving its clients, answering
// their pings and reads, until it notices the silence, after syncLimit
// ticks (2 s here). The leader hears nothing of the holder's session
// meanwhile and expires it after its timeout (1 s), and the waiter takes
// the lock. The holder's link to its member is up and answered all along:
// only its monitor's clock of the leader (internal/hold: the last answered
// write or sync, which a cut-off follower cannot answer) tells, and Done
// must close before the waiter holds, as with a loud cut.
func TestSilentlyIsolatedFollowerWithItsHolder(t *testing.T) {
	e := proxiedEnsemble(t)
	testCutHolder(t, "isolated-follower-with-holder-silent", true, isolateHoldersMember(e, false, e.PartitionSilently))
}

// A member cut off from the other two while contenders of every variant
// cycle on the ensemble: a follower with clients attached (they move to
// the others), and the leader with nobody attached (the followers elect
// a new one). Sessions survive, nobody holds a lock twice, every variant
// acquires again, and nothing is left behind.
func TestIsolatedMember(t *testing.T) {
	e := proxiedEnsemble(t)
	for _, tc := range []struct {
		name   string
		leader bool
	}{
		{"follower-with-clients", false},
		{"leader-alone", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leader, rest := leaderAndRest(t, e)
			cut, servers := rest[0], e.Servers()
			if tc.leader {
				cut, servers = leader, addrs(e, rest)
			}
			tp := newTape()
			ws := startWorkloads(t, tp, 4, 5*time.Millisecond, servers...)
			recoverAfter(t, tp, ws, 0, 20*time.Second) // warm
			others := slices.DeleteFunc([]int{0, 1, 2}, func(i int) bool { return i == cut })
			at := tp.now()
			if err := e.Partition([]int{cut}, others); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Heal() }) // should the test stop before it heals
			t.Logf("member %d (leader %v) cut off from %v at %v", cut, cut == leader, others, at.Round(time.Millisecond))
			after := recoverAfter(t, tp, ws, at+time.Second, 30*time.Second)
			heal(t, e)
			healed := tp.now()
			waitAll(t, ws, healed, 30*time.Second)
			moved, ended := 0, 0
			for _, w := range ws {
				for _, c := range w.clients {
					c.mu.Lock()
					if len(c.disc) > 0 {
						moved++
					}
					ended += len(c.ended)
					c.mu.Unlock()
				}
			}
			t.Logf("%d clients lost their connection and came back, %d sessions ended", moved, ended)
			if moved == 0 {
				t.Error("no client was connected to the member cut off: the test tested nothing")
			}
			if !tc.leader && ended > 0 {
				t.Errorf("%d sessions ended: a follower's clients must move to the other members in time", ended)
			}
			finish(t, tp, ws, "isolated-"+tc.name, after, func(w *workload) []string {
				return []string{fmt.Sprintf("contenders=%d unlock_errors=%d", len(w.clients), w.cy.unlockErrors())}
			})
		})
	}
}

// syncedThenCut heals the ensemble, waits until every member serves
// (so that no follower is in the middle of a sync), and cuts member i off
// from the other two.
func syncedThenCut(t *testing.T, e loudEnsemble, i int) {
	t.Helper()
	if err := e.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitServing(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("before a cut: %v", err)
	}
	others := slices.DeleteFunc([]int{0, 1, 2}, func(j int) bool { return j == i })
	if err := e.Partition([]int{i}, others); err != nil {
		t.Fatal(err)
	}
}

// Jepsen's partition nemesis: every three seconds or so a random member is cut
// off from the other two, or the ensemble is healed, while contenders of
// every variant cycle on two paths each. A cut comes only once the
// ensemble has healed and every member serves again (syncedThenCut). No
// double holder, every variant acquires after the last heal, nothing
// left.
func TestRandomHalves(t *testing.T) {
	e := proxiedEnsemble(t)
	testRandomHalves(t, e, nil, "random-halves")
}

// testRandomHalves is TestRandomHalves on e, its contenders dialing with
// dial (nil: from this process).
func testRandomHalves(t *testing.T, e loudEnsemble, dial zk.Dialer, fault string) {
	tp := newTape()
	ws := startWorkloadsVia(t, tp, 3, 5*time.Millisecond, dial, e.Servers()...)
	recoverAfter(t, tp, ws, 0, 20*time.Second)
	sd := *seed
	if sd == 0 {
		sd = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay the schedule with -seed %d)", sd, sd)
	rng := rand.New(rand.NewPCG(sd, 15))
	cuts := 0
	t.Cleanup(func() { _ = e.Heal() }) // should the test stop before it heals
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); {
		if i := rng.IntN(4); i < 3 {
			// Cut only an ensemble whose members all serve again: a
			// follower cut while it syncs with its leader can come back
			// with a database that lacks transactions (ZooKeeper 3.8.0's
			// learner sync, docs/reliability.md), and no lock can be
			// tested on such a replica.
			syncedThenCut(t, e, i)
			cuts++
		} else if err := e.Heal(); err != nil {
			t.Fatal(err)
		}
		// Long enough for an election to end between two faults.
		time.Sleep(2500*time.Millisecond + time.Duration(rng.IntN(1500))*time.Millisecond)
	}
	heal(t, e)
	healed := tp.now()
	requireWritesVia(t, e, dial)
	after := recoverAfter(t, tp, ws, healed, 60*time.Second)
	waitAll(t, ws, healed, 60*time.Second)
	finish(t, tp, ws, fault, after, func(w *workload) []string {
		return []string{fmt.Sprintf("cuts=%d contenders=%d unlock_errors=%d", cuts, len(w.clients), w.cy.unlockErrors())}
	})
}

// A holder whose link to its member turns slow. go-zookeeper gives up a
// connection that is silent for its read timeout (two thirds of the
// session timeout) and pings every half of it, so a round trip longer than
// half the read timeout is a silence of more than the read timeout right
// after the link slows. The holder's clock of the leader (internal/liveness)
// proves a moment only with two round trips and a quarter of a session
// timeout between them, so it trails the present by about four round
// trips and half a session timeout at worst: a round trip of more than a
// tenth of the session timeout no longer keeps a hold, although the
// session lives.
//   - within (a round trip of 10% of the read timeout, a fifteenth of the
//     session timeout): the connection and the session stay up, and the
//     cut-off rule must not give the hold up: for three session timeouts
//     the holder keeps it (Done open) and the waiter, on a fast link,
//     keeps waiting;
//   - beyond (80%): the connection drops, and the holder can no longer
//     tell its slow link from a cut one: it must give the hold up (Done
//     closes) by the time the servers could expire its session, which is
//     safe, though here they would not have.
//
// Either way, with the link fast again the holder releases (or learns of
// its loss) and the waiter takes the lock.
func TestSlowClientLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		share    int // of the read timeout, in percent, per round trip
		wantHeld bool
	}{
		{"within", 10, true},
		{"beyond", 80, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v *variant) { testSlowClientLink(t, v, tc.share, tc.wantHeld) })
		})
	}
}

func testSlowClientLink(t *testing.T, v *variant, share int, wantHeld bool) {
	ctx := testCtx(t, 60*time.Second)
	tp := newTape()
	path := zktest.LockPath(t)
	link, err := ensemble.NewSlowProxy(zktest.Servers(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	h := newClient(t, tp, v, path, "holder", withServers(link.Addr()))
	w := newClient(t, tp, v, path, "waiter")
	if err := h.l.Lock(h.ctx(ctx)); err != nil {
		t.Fatalf("holder: Lock: %v", err)
	}
	hh := tp.enter(h)
	wres := lockAsync(ctx, w)
	waitQueued(t, zktest.Connect(t), w)

	readTimeout := 2 * h.st / 3
	oneWay := readTimeout * time.Duration(share) / 200
	slowAt := tp.now()
	if err := link.SetLatency(oneWay); err != nil {
		t.Fatal(err)
	}
	var doneAt time.Duration
	select {
	case <-h.l.Done():
		doneAt = tp.now()
		if wantHeld {
			t.Fatalf("holder: Done closed %v into the slow link (round trip %v, session %v)", doneAt-slowAt, 2*oneWay, h.st)
		}
		// The servers heard the holder's requests until the link slowed
		// at least, so they can not expire its session sooner.
		if doneAt-slowAt > h.st {
			t.Errorf("holder: Done closed %v into the slow link, after the servers could have expired its session (%v)", doneAt-slowAt, h.st)
		}
	case r := <-wres:
		t.Fatalf("waiter: Lock returned (%v) while the holder, slow but alive, held the lock", r.Err)
	case <-time.After(3 * h.st):
		if !wantHeld {
			t.Fatalf("holder: Done open %v into a link too slow for its connection (round trip %v, session %v)", 3*h.st, 2*oneWay, h.st)
		}
	}
	if err := link.SetLatency(0); err != nil {
		t.Fatal(err)
	}
	if wantHeld {
		tp.leave(hh, stillHeld)
	} else {
		tp.leave(hh, doneAt)
	}
	uerr := h.l.Unlock(h.ctx(ctx))
	switch {
	case wantHeld && uerr != nil:
		t.Errorf("holder: Unlock after the slow spell: %v", uerr)
	case !wantHeld && !errors.Is(uerr, zklocks.ErrLockLost):
		t.Errorf("holder: Unlock after giving the hold up: %v; want %v", uerr, zklocks.ErrLockLost)
	}
	r := locktest.AwaitLock(t, wres, 2*h.st+10*time.Second, "waiter")
	if r.Err != nil {
		t.Fatalf("waiter: Lock: %v", r.Err)
	}
	wh := tp.enterAt(w, tp.at(r.At))
	tp.leave(wh, stillHeld)
	if err := w.l.Unlock(w.ctx(ctx)); err != nil {
		t.Errorf("waiter: Unlock: %v", err)
	}
	holds, double, belief := checkHistory(t, tp, v, path)
	left := nodesLeft(t, zktest.Connect(t), v, path, h.st+2*time.Second)
	extra := []string{"round_trip=" + (2 * oneWay).String(), "session=" + h.st.String()}
	if !wantHeld {
		extra = append(extra, "done_after_slow="+(doneAt-slowAt).Round(time.Millisecond).String())
	}
	report{fault: fmt.Sprintf("slow-client-link-%d%%", share), variant: v.name, holds: holds, double: double,
		left: left, belief: belief, extra: extra}.log(t)
}

// Slow links between the members: every quorum write waits for a
// follower's acknowledgement, so with each message between members
// delayed by d, a create or delete takes about 2d longer, and each
// handoff (a delete, then the waiter's wake-up) does too. The test runs
// the contenders of every variant with fast links and then with slow
// ones, and reports each variant's throughput and median handoff gap in
// both phases; it checks only what must hold at any speed: no double
// holder, nothing left behind.
func TestSlowMemberLinks(t *testing.T) {
	const d, phase = 10 * time.Millisecond, 3 * time.Second
	e := proxiedEnsemble(t)
	tp := newTape()
	ws := startWorkloads(t, tp, 4, 2*time.Millisecond, e.Servers()...)
	recoverAfter(t, tp, ws, 0, 20*time.Second)
	fastFrom := tp.now()
	time.Sleep(phase)
	slowFrom := tp.now()
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		if err := e.SlowLink(pair[0], pair[1], d); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(phase)
	slowTo := tp.now()
	heal(t, e)
	finish(t, tp, ws, "slow-member-links", map[string]time.Duration{}, func(w *workload) []string {
		fast, slow := pace(tp, w.path, fastFrom, slowFrom), pace(tp, w.path, slowFrom, slowTo)
		return []string{
			"member_latency=" + d.String(),
			fmt.Sprintf("holds_per_s_fast=%.0f holds_per_s_slow=%.0f", fast.perSecond, slow.perSecond),
			fmt.Sprintf("handoff_p50_fast=%v handoff_p50_slow=%v", fast.handoff.Round(100*time.Microsecond), slow.handoff.Round(100*time.Microsecond)),
		}
	})
}

// pacing is how fast the holds of one path followed each other.
type pacing struct {
	perSecond float64
	handoff   time.Duration // median gap between one hold's end and the next one's start
}

func pace(tp *tape, path string, from, to time.Duration) pacing {
	h, _ := tp.history(path)
	var in history.History
	for _, x := range h {
		if x.Enter >= from && x.Exit <= to {
			in = append(in, x)
		}
	}
	slices.SortFunc(in, func(a, b history.Hold) int { return int(a.Enter - b.Enter) })
	var gaps []time.Duration
	for i := 1; i < len(in); i++ {
		gaps = append(gaps, in[i].Enter-in[i-1].Exit)
	}
	p := pacing{perSecond: float64(len(in)) / (to - from).Seconds()}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		p.handoff = gaps[len(gaps)/2]
	}
	return p
}

// requireWrites fails the test, naming every member's mode, unless a
// write through each member succeeds within 30s: the ensemble itself has
// recovered, whatever the locks do next.
func requireWrites(t *testing.T, e faultEnsemble) { requireWritesVia(t, e, nil) }

// requireWritesVia is requireWrites for a test whose clients dial with
// dial.
func requireWritesVia(t *testing.T, e faultEnsemble, dial zk.Dialer) {
	t.Helper()
	for i, addr := range e.Servers() {
		conn := zktest.Connect(t, zktest.WithServers([]string{addr}), zktest.WithDialer(dial))
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := conn.Create("/write-probe-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				var modes []string
				for _, a := range e.Servers() {
					st, serr := ensemble.ServerStatus(a)
					modes = append(modes, fmt.Sprintf("%s: %s %v", a, st.Mode, serr))
				}
				t.Fatalf("the ensemble takes no write through member %d 30s after the heal: %v; modes %v", i, err, modes)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
