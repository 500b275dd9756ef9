package ensemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinksNeedProxiedLinks(t *testing.T) {
	e := &Ensemble{}
	assert.ErrorIs(t, e.Partition([]int{0}), ErrNoLinks)
	assert.ErrorIs(t, e.PartitionSilently([]int{0}), ErrNoLinks)
	assert.ErrorIs(t, e.Heal(), ErrNoLinks)
	assert.Error(t, e.SlowLink(0, 1, time.Microsecond), "below a millisecond")
	assert.ErrorIs(t, e.SlowLink(0, 1, time.Millisecond), ErrNoLinks)
}

// waitModes polls srvr until every member in want reports its mode
// ("leader", "follower", or "" for not serving).
func waitModes(t *testing.T, e *Ensemble, want map[int]string, within time.Duration) {
	t.Helper()
	mode := func(i int) string {
		st, err := ServerStatus(e.members[i].addr())
		if err != nil {
			return ""
		}
		return st.Mode
	}
	deadline := time.Now().Add(within)
	for {
		got := map[int]string{}
		for i := range want {
			got[i] = mode(i)
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("members' modes after %v: %v, want %v", within, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A leader cut off from both followers stops serving; the followers elect
// one of them and go on taking writes; healed, the old leader follows.
// Then a slowed link between the new leader and the other follower makes
// every write wait for it.
func TestPartitionHealAndSlowLink(t *testing.T) {
	cfg := DefaultConfig()
	// The largest id joins last and follows, so the leader cut below is
	// not the member every election of equal logs picks. Once, in a
	// loaded CI run, the two members left found no leader in 30 s without
	// it; why was not found, and this is the suite's remedy elsewhere.
	cfg.ProxiedLinks, cfg.LastJoinsLate = true, true
	e := startForTest(t, cfg)
	old, err := e.Leader()
	require.NoError(t, err)
	var rest []int
	for i := range e.Size() {
		if i != old {
			rest = append(rest, i)
		}
	}

	require.Error(t, e.Partition([]int{0}, []int{0, 1}), "a member in two groups")
	require.Error(t, e.Partition([]int{7}), "no such member")
	require.NoError(t, e.Partition([]int{old}, rest))
	waitModes(t, e, map[int]string{old: ""}, 30*time.Second)
	var leader int
	require.Eventually(t, func() bool {
		for _, i := range rest {
			if st, err := ServerStatus(e.members[i].addr()); err == nil && st.Mode == "leader" {
				leader = i
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the majority elects a leader")
	follower := rest[0]
	if follower == leader {
		follower = rest[1]
	}
	conn := connect(t, e.members[follower].addr())
	_, err = conn.Create("/written-during-the-partition", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "a write on the majority side")

	require.NoError(t, e.Heal())
	waitModes(t, e, map[int]string{old: "follower", leader: "leader", follower: "follower"}, 30*time.Second)
	back := connect(t, e.members[old].addr())
	_, err = back.Sync("/")
	require.NoError(t, err)
	ok, _, err := back.Exists("/written-during-the-partition")
	require.NoError(t, err)
	assert.True(t, ok, "the old leader has the majority's write after the heal")

	// A write needs the leader and one follower: slow both followers'
	// links to the leader, and no write can be quicker than one slowed
	// round trip.
	const d = 100 * time.Millisecond
	for _, i := range []int{old, follower} {
		require.NoError(t, e.SlowLink(leader, i, d))
	}
	start := time.Now()
	_, err = conn.Create("/written-over-slow-links", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 2*d, "a quorum write over links slowed by %v each way", d)
	require.NoError(t, e.Heal())
	assert.True(t, slices.Contains(rest, leader))

	// A silent cut: the old leader, now a follower, is cut off without a
	// closed connection; it notices only when its reads time out, and
	// then stops serving.
	require.NoError(t, e.PartitionSilently([]int{old}, []int{leader, follower}))
	waitModes(t, e, map[int]string{old: ""}, 30*time.Second)
	_, err = conn.Create("/written-during-a-silent-partition", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "the majority writes during a silent partition")
	require.NoError(t, e.Heal())
	waitModes(t, e, map[int]string{old: "follower", leader: "leader", follower: "follower"}, 30*time.Second)
}

// A member cut off by Partition takes no part in the others' elections:
// from the cut on, its log records no vote (a FastLeaderElection
// notification) from either of them. Member 1 is restarted first, so
// that each of the others holds an election connection it dialled back
// to member 1 at the address member 1 advertised: before the
// advertiser, those went to member 1's own port, outside the proxies,
// survived the cut, and member 1 heard the others' states within its
// first election round.
func TestPartitionCutsTheVotes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ProxiedLinks, cfg.LastJoinsLate = true, true
	e := startForTest(t, cfg)
	const cut = 0 // the smallest id: the others dial it back
	require.NoError(t, e.Kill(cut))
	require.NoError(t, e.Restart(cut))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, e.WaitServing(ctx))
	logFile := e.Members()[cut].LogFile
	before, err := os.ReadFile(logFile)
	require.NoError(t, err)

	require.NoError(t, e.Partition([]int{cut}, []int{1, 2}))
	waitModes(t, e, map[int]string{cut: ""}, 30*time.Second)
	// Long enough for several of the cut member's election rounds (the
	// first notification timeout is 200ms and doubles).
	time.Sleep(4 * time.Second)
	after, err := os.ReadFile(logFile)
	require.NoError(t, err)
	heard := regexp.MustCompile(`Notification: .*n\.sid:(\d+)`)
	own := 0
	for _, line := range strings.Split(string(after[len(before):]), "\n") {
		m := heard.FindStringSubmatch(line)
		switch {
		case m == nil:
		case m[1] == strconv.Itoa(cut+1):
			own++
		default:
			t.Errorf("the cut member heard a vote of member %s across the cut: %s", m[1], line)
		}
	}
	if own == 0 {
		t.Error("the cut member logged no notification at all: did it hold an election?")
	}

	require.NoError(t, e.Heal())
	require.NoError(t, e.WaitServing(ctx))
}

// A connection that lived through a silence must not go on with a hole
// where the dropped bytes were: ending the silence closes it (toxiproxy's
// timeout toxic closes its stream when removed; this pins that), and a
// new connection carries everything.
func TestEndOfSilenceClosesTheConnectionsThatLivedThroughIt(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "silent", "127.0.0.1:0", echo.Addr().String())
	require.NoError(t, p.Start())
	defer p.Stop()
	w := &way{quorum: p, election: p}
	roundTrip := func(c net.Conn, msg string) error {
		if _, err := c.Write([]byte(msg)); err != nil {
			return err
		}
		if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			return err
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if string(got) != msg {
			return fmt.Errorf("echoed %q, want %q", got, msg)
		}
		return nil
	}

	c, err := net.Dial("tcp", p.Listen)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, roundTrip(c, "before"), "the link is up before the silence")
	require.NoError(t, setSilent(w, true))
	_, err = c.Write([]byte("sent into the silence"))
	require.NoError(t, err)
	require.NoError(t, setSilent(w, false))
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := c.Read(make([]byte, 64))
	var nerr net.Error
	require.False(t, errors.As(err, &nerr) && nerr.Timeout(), "the connection that lived through the silence was left open")
	require.Error(t, err, "the connection that lived through the silence read %d bytes instead of ending", n)

	again, err := net.Dial("tcp", p.Listen)
	require.NoError(t, err)
	defer again.Close()
	require.NoError(t, roundTrip(again, "after"), "a new connection after the silence")
}
