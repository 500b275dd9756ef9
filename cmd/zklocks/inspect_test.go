package main

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
	"github.com/zklocks/zklocks/timeout"
)

// mixedQueue is a queue of every kind inspect knows on one path, in this
// order: a reentrant holder counting in its node and re-entered once, a
// sequential waiter with data, a timeout waiter with a lease, a reentrant
// waiter counting in memory, a kazoo node and a Curator node made by hand.
type mixedQueue struct {
	path     string
	sessions []string // the contenders' session ids, in queue order
	holder   *reentrant.Mutex
}

var mixedKinds = []string{kindReentrant, kindSequential, kindTimeout, kindReentrant, kindKazoo, kindCurator}

func newMixedQueue(t *testing.T, ctx context.Context) mixedQueue {
	t.Helper()
	q := mixedQueue{path: zktest.LockPath(t)}
	hconn := zktest.Connect(t)
	var err error
	q.holder, err = reentrant.New(zktest.Session(t, hconn), q.path, reentrant.WithCountMode(reentrant.InNode))
	require.NoError(t, err)
	hctx := reentrant.WithOwner(ctx, "invoice-run-42")
	require.NoError(t, q.holder.Lock(hctx))
	require.NoError(t, q.holder.Lock(hctx), "re-entry")
	q.sessions = append(q.sessions, fmt.Sprintf("%#x", hconn.SessionID()))

	join := func(lock func(context.Context) error, conn interface{ SessionID() int64 }) {
		waitIn(t, ctx, lock)
		waitQueued(t, hconn, q.path, len(q.sessions)+1)
		q.sessions = append(q.sessions, fmt.Sprintf("%#x", conn.SessionID()))
	}
	sconn := zktest.Connect(t)
	s, err := sequential.New(zktest.Session(t, sconn), q.path, sequential.WithData([]byte("worker-7")))
	require.NoError(t, err)
	join(s.Lock, sconn)
	tconn := zktest.Connect(t)
	tm, err := timeout.New(zktest.Session(t, tconn), q.path, timeout.WithLease(5*time.Second))
	require.NoError(t, err)
	join(tm.Lock, tconn)
	rconn := zktest.Connect(t)
	r, err := reentrant.New(zktest.Session(t, rconn), q.path)
	require.NoError(t, err)
	join(func(ctx context.Context) error { return r.Lock(reentrant.WithOwner(ctx, "refund-9")) }, rconn)

	q.sessions = append(q.sessions, handMade(t, ctx, q.path, kazooStyle(), []byte("py-worker-3")))
	q.sessions = append(q.sessions, handMade(t, ctx, q.path, curatorStyle(), []byte("10.0.0.7")))
	return q
}

func TestInspectShowsAMixedQueueInOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	q := newMixedQueue(t, ctx)

	// Every waiter made by a zklocks lock watches its predecessor, and the
	// holder watches its own node (for Done; it sets that watch again
	// after each of its count writes fired it). Wait until the servers
	// list those watches.
	rep := pollInspect(t, ctx, "the holder's and each waiter's watches", func(r jsonReport) bool {
		cs := r.Locks[0].Contenders
		if len(cs) != len(mixedKinds) || cs[0].Watchers == nil || !slices.Contains(cs[0].WatcherSessions, q.sessions[0]) {
			return false
		}
		for i := 1; i <= 3; i++ {
			if !slices.Contains(cs[i-1].WatcherSessions, q.sessions[i]) {
				return false
			}
		}
		return true
	}, q.path)
	l := rep.Locks[0]
	assert.True(t, l.Exists)
	assert.Equal(t, layoutChildren, *l.Layout)
	require.NotNil(t, l.NowMs)

	total := 0
	for i, c := range l.Contenders {
		assert.Equal(t, i, c.Index)
		assert.Equal(t, mixedKinds[i], c.Kind, "contender %d", i)
		assert.Equal(t, q.sessions[i], c.Session, "contender %d", i)
		assert.Equal(t, map[bool]string{true: roleHolds, false: roleWaits}[i == 0], c.Role)
		require.NotNil(t, c.Seq)
		assert.True(t, strings.HasSuffix(c.Node, fmt.Sprintf("%010d", *c.Seq)), c.Node)
		assert.Equal(t, *l.NowMs-c.CtimeMs, *c.CreatedMsAgo)
		assert.Equal(t, *l.NowMs-c.MtimeMs, *c.WrittenMsAgo)
		assert.GreaterOrEqual(t, *c.CreatedMsAgo, *c.WrittenMsAgo, "a node is written after it is created")
		assert.GreaterOrEqual(t, *c.WrittenMsAgo, int64(0), "the clock probe is written after every read")
		if i > 0 {
			assert.Greater(t, *c.Seq, *l.Contenders[i-1].Seq, "queue order")
			assert.LessOrEqual(t, *c.CreatedMsAgo, *l.Contenders[i-1].CreatedMsAgo, "joined later")
		}
		assert.Len(t, c.WatcherSessions, *c.Watchers)
		total += *c.Watchers
	}
	assert.Equal(t, total, *l.WatchersTotal, "the path's total is the sum over its nodes (nobody watches the path)")

	cs := l.Contenders
	assert.Equal(t, q.holder.Token(), cs[0].Token, "the holder's token is its node's czxid")
	require.NotNil(t, cs[0].Owner)
	assert.Equal(t, "invoice-run-42", cs[0].Owner.Owner)
	assert.Equal(t, "node", cs[0].Owner.Mode)
	require.NotNil(t, cs[0].Owner.Count)
	assert.Equal(t, 2, *cs[0].Owner.Count, "re-entered once")
	assert.Equal(t, "worker-7", *cs[1].Data)
	require.NotNil(t, cs[2].Lease)
	assert.Equal(t, int64(5000), cs[2].Lease.Ms)
	assert.False(t, cs[2].Lease.Held, "a waiter's lease does not run yet")
	assert.Nil(t, cs[2].Lease.Expired)
	require.NotNil(t, cs[3].Owner)
	assert.Equal(t, "refund-9", cs[3].Owner.Owner)
	assert.Equal(t, "memory", cs[3].Owner.Mode)
	assert.Nil(t, cs[3].Owner.Count, "memory mode keeps no count in the node")
	assert.Equal(t, "py-worker-3", *cs[4].Data)
	assert.Equal(t, 0, *cs[4].Watchers, "the node behind the kazoo node is made by hand and watches nothing")
	assert.Equal(t, "10.0.0.7", *cs[5].Data)

	// The same queue as text: a title, a header and one row per contender.
	code, out, errOut := zklocksCtx(ctx, "inspect", serversFlag(t), q.path)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2+len(mixedKinds), out)
	assert.Contains(t, lines[0], q.path+": held by #0, 5 waiting; ")
	assert.Contains(t, lines[0], "ensemble clock ")
	assert.Equal(t, strings.Fields("# ROLE KIND NODE SEQ TOKEN SESSION AGE WRITTEN WATCHERS DATA"), strings.Fields(lines[1]))
	rows := lines[2:]
	for i, want := range mixedKinds {
		f := strings.Fields(rows[i])
		assert.Equal(t, []string{fmt.Sprint(i), map[bool]string{true: roleHolds, false: roleWaits}[i == 0], want},
			f[:3], rows[i])
		assert.Equal(t, q.sessions[i], f[6], rows[i])
	}
	assert.Contains(t, rows[0], fmt.Sprint(q.holder.Token()))
	assert.Regexp(t, ` <=\d[^ ]*s `, rows[0], "the holder's age is an upper bound of its hold")
	assert.Contains(t, rows[0], "owner=invoice-run-42 host=")
	assert.Contains(t, rows[0], "mode=node count=2")
	assert.Contains(t, rows[1], "worker-7")
	assert.Contains(t, rows[2], "lease=5s (runs once it holds)")
	assert.Contains(t, rows[3], "owner=refund-9")
	assert.NotContains(t, rows[3], "count=")
	assert.Contains(t, rows[4], "__lock__")
	assert.Contains(t, rows[4], "py-worker-3")
	assert.Contains(t, rows[5], "10.0.0.7")
}

func TestInspectNaiveLock(t *testing.T) {
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	hconn := zktest.Connect(t)
	m, err := naive.New(zktest.Session(t, hconn), path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	wconn := zktest.Connect(t)
	w, err := naive.New(zktest.Session(t, wconn), path)
	require.NoError(t, err)
	waitIn(t, ctx, w.Lock)
	holder, waiter := fmt.Sprintf("%#x", hconn.SessionID()), fmt.Sprintf("%#x", wconn.SessionID())

	// A naive waiter leaves no node: it only shows as a watch on the holder's.
	rep := pollInspect(t, ctx, "the naive waiter's watch", func(r jsonReport) bool {
		cs := r.Locks[0].Contenders
		return len(cs) == 1 && cs[0].Watchers != nil && slices.Contains(cs[0].WatcherSessions, waiter)
	}, path)
	l := rep.Locks[0]
	assert.Equal(t, layoutNode, *l.Layout)
	c := l.Contenders[0]
	assert.Equal(t, kindNaive, c.Kind)
	assert.Equal(t, roleHolds, c.Role)
	assert.Equal(t, path, c.Node)
	assert.Nil(t, c.Seq, "the naive node has no sequence number")
	assert.Equal(t, m.Token(), c.Token)
	assert.Equal(t, holder, c.Session)
	assert.Contains(t, c.WatcherSessions, holder, "the holder watches its own node (Done)")
	assert.Equal(t, *c.Watchers, *l.WatchersTotal)

	code, out, errOut := zklocksCtx(ctx, "inspect", serversFlag(t), path, path+"-never-used")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, path+": held (naive layout: waiters have no node")
	assert.Contains(t, out, fmt.Sprint(m.Token()))
	assert.NotContains(t, out, "<=", "the naive node is created by the acquisition: its age is the hold's")
	assert.Contains(t, out, path+"-never-used: no such lock")
}

func TestInspectDecodesTimeoutLeases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A renewing holder: a running lease with time left.
	renewing := zktest.LockPath(t)
	holder, err := timeout.New(zktest.Connected(t), renewing, timeout.WithLease(10*time.Second))
	require.NoError(t, err)
	require.NoError(t, holder.Lock(ctx))

	// A node in the timeout format that nobody renews: its lease runs out
	// 200ms of ensemble time after it was written.
	stale := zktest.LockPath(t)
	handMade(t, ctx, stale, zklocksStyle(), []byte("lease=200ms held"))

	rep := pollInspect(t, ctx, "the unrenewed lease expired", func(r jsonReport) bool {
		cs := r.Locks[1].Contenders
		return len(cs) == 1 && cs[0].Lease != nil && cs[0].Lease.Expired != nil && *cs[0].Lease.Expired
	}, renewing, stale)

	c := rep.Locks[0].Contenders[0]
	assert.Equal(t, kindTimeout, c.Kind)
	assert.Equal(t, holder.Token(), c.Token)
	require.NotNil(t, c.Lease)
	assert.Equal(t, int64(10000), c.Lease.Ms)
	assert.True(t, c.Lease.Held, "the holder stamped its lease")
	assert.False(t, *c.Lease.Expired)
	assert.Equal(t, c.MtimeMs+10000-*rep.Locks[0].NowMs, *c.Lease.RemainingMs, "the lease runs from the last renewal")

	s := rep.Locks[1].Contenders[0]
	assert.Equal(t, kindTimeout, s.Kind)
	assert.Equal(t, int64(200), s.Lease.Ms)
	assert.LessOrEqual(t, *s.Lease.RemainingMs, int64(0))
	assert.Equal(t, s.MtimeMs+200-*rep.Locks[1].NowMs, *s.Lease.RemainingMs)

	code, out, errOut := zklocksCtx(ctx, "inspect", serversFlag(t), renewing, stale)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `lease=10s held, \d[^ ]* left`, out)
	assert.Regexp(t, `lease=200ms held, EXPIRED \d[^ ]* ago \(a waiter may evict it\)`, out)
}

func TestInspectMissingFreeAndForeignPaths(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	missing := zktest.LockPath(t)
	// free: the path exists, with a child that is not a contender (no
	// sequence suffix); ephemeral, so that nothing outlives the test.
	free := zktest.LockPath(t)
	conn := zktest.Connect(t)
	c := zkop.New(conn, zktest.Clock(t, conn))
	require.NoError(t, c.EnsureParents(ctx, free, zkpath.Ancestors(free), true, zk.WorldACL(zk.PermAll)))
	_, err := c.Create(ctx, free+"/config", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	// foreign: a contender whose name no known library uses.
	foreign := zktest.LockPath(t)
	handMade(t, ctx, foreign, "lock-", []byte{0xff, 0x00})

	rep, _ := inspectJSON(t, ctx, missing, free, foreign)
	assert.False(t, rep.Locks[0].Exists)
	assert.Nil(t, rep.Locks[0].Layout)
	assert.Empty(t, rep.Locks[0].Contenders)
	assert.True(t, rep.Locks[1].Exists)
	assert.Equal(t, layoutChildren, *rep.Locks[1].Layout)
	assert.Empty(t, rep.Locks[1].Contenders, "a child without a sequence suffix is not a contender")
	require.Len(t, rep.Locks[2].Contenders, 1)
	assert.Equal(t, kindUnknown, rep.Locks[2].Contenders[0].Kind)
	assert.Nil(t, rep.Locks[2].Contenders[0].Data, "binary data is not shown as text")
	assert.Equal(t, 2, rep.Locks[2].Contenders[0].DataBytes)

	code, out, errOut := zklocksCtx(ctx, "inspect", serversFlag(t), missing, free, foreign)
	assert.Equal(t, 0, code, "a missing path is an answer, not an error: %s", errOut)
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, blocks, 3, out)
	assert.Equal(t, missing+": no such lock (nobody holds or waits); 0 watches", blocks[0])
	assert.Regexp(t, `^`+free+`: free \(no contenders\); 0 watches; ensemble clock `, blocks[1])
	assert.Contains(t, blocks[2], "unknown")
	assert.Contains(t, blocks[2], "(2 bytes, not text)")
}

func TestInspectRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no path":          {"inspect", "-servers=127.0.0.1:1"},
		"relative path":    {"inspect", "-servers=127.0.0.1:1", "locks/a"},
		"reserved path":    {"inspect", "-servers=127.0.0.1:1", "/zookeeper/quota"},
		"trailing slash":   {"inspect", "-servers=127.0.0.1:1", "/locks/a/"},
		"one bad of two":   {"inspect", "-servers=127.0.0.1:1", "/locks/a", "/locks//b"},
		"tiny interval":    {"inspect", "-servers=127.0.0.1:1", "-watch", "-interval=1ms", "/locks/a"},
		"zero timeout":     {"inspect", "-servers=127.0.0.1:1", "-timeout=0", "/locks/a"},
		"unknown flag":     {"inspect", "-servers=127.0.0.1:1", "-colour", "/locks/a"},
		"interval garbage": {"inspect", "-servers=127.0.0.1:1", "-interval=soon", "/locks/a"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := zklocks(t, args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "zklocks inspect:")
		})
	}
}

// closedPort returns a loopback address nobody listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestInspectGivesUpOnAnUnreachableEnsemble(t *testing.T) {
	addr := closedPort(t)
	for _, mode := range [][]string{nil, {"-json"}, {"-watch", "-interval=200ms"}} {
		t.Run(strings.Join(append([]string{"inspect"}, mode...), " "), func(t *testing.T) {
			start := time.Now()
			args := append(append([]string{"inspect", "-servers=" + addr, "-timeout=300ms"}, mode...), "/locks/a")
			code, out, errOut := zklocks(t, args...)
			took := time.Since(start)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "ensemble unreachable: no session within -timeout 300ms")
			assert.Contains(t, errOut, addr, "the message names the servers")
			// Not a second later, which is how long closing a connection
			// that never had a session can take.
			assert.Less(t, took, 1200*time.Millisecond, "it gives up on -timeout")
		})
	}
}

func TestInspectWithAMemberDownShowsUnknownWatchCounts(t *testing.T) {
	path, ctx, m := heldLock(t, 20*time.Second)
	down := closedPort(t)
	servers := "-servers=" + strings.Join(append(zktest.Servers(t), down), ",")

	code, out, errOut := zklocksCtx(ctx, "inspect", servers, path)
	require.Equal(t, 0, code, "a silent member is a note, not a failure: %s", errOut)
	assert.Contains(t, out, "; ? watches")
	assert.Regexp(t, `(?m)^note: watch counts unknown \(\?\): 3 of 4 listed servers answered wchp: wchp `+down, out)
	assert.Contains(t, out, fmt.Sprint(m.Token()), "the rest of the report is there")

	code, out, errOut = zklocksCtx(ctx, "inspect", "-json", servers, path)
	require.Equal(t, 0, code, errOut)
	rep := decodeReport(t, []byte(out))
	require.NotNil(t, rep.Wchp)
	assert.Equal(t, 4, rep.Wchp.Members)
	assert.Equal(t, 3, rep.Wchp.Answered)
	require.Len(t, rep.Wchp.Errors, 1)
	assert.Contains(t, rep.Wchp.Errors[0], down)
	assert.Nil(t, rep.Locks[0].WatchersTotal)
	assert.Nil(t, rep.Locks[0].Contenders[0].Watchers, "a partial count would look like a real one")
}

// The counts of a member left out of -servers would be missing without a
// sign; conf tells inspect how many members there are. A member listed
// twice is counted once.
func TestInspectChecksTheServersListAgainstTheEnsemble(t *testing.T) {
	servers := zktest.Servers(t)
	if len(servers) < 2 {
		t.Skip("needs an ensemble of at least two members")
	}
	path, ctx, _ := heldLock(t, 20*time.Second)
	waiter, err := sequential.New(zktest.Connected(t), path)
	require.NoError(t, err)
	waitIn(t, ctx, waiter.Lock)
	waitQueued(t, zktest.Connect(t), path, 2)

	// Three watches once the waiter is settled: each contender's on its
	// own node, and the waiter's on the holder's.
	full := pollInspect(t, ctx, "three watches", func(r jsonReport) bool {
		return r.Locks[0].WatchersTotal != nil && *r.Locks[0].WatchersTotal == 3
	}, path)
	require.True(t, full.Wchp.Complete, "every member listed: %v", full.Wchp.Errors)
	require.NotNil(t, full.Wchp.EnsembleMembers)
	assert.Equal(t, len(servers), *full.Wchp.EnsembleMembers)
	require.NotNil(t, full.Locks[0].WatchersTotal)

	t.Run("a member left out", func(t *testing.T) {
		rep := inspectWith(t, ctx, servers[:len(servers)-1], path)
		assert.False(t, rep.Wchp.Complete)
		assert.Equal(t, rep.Wchp.Members, rep.Wchp.Answered, "every listed server answered")
		require.Len(t, rep.Wchp.Errors, 1)
		assert.Contains(t, rep.Wchp.Errors[0], fmt.Sprintf("the ensemble has %d members", len(servers)))
		assert.Nil(t, rep.Locks[0].WatchersTotal, "a partial count would look like a real one")
	})
	t.Run("a member listed twice", func(t *testing.T) {
		rep := inspectWith(t, ctx, append([]string{servers[0]}, servers...), path)
		assert.True(t, rep.Wchp.Complete, "%v", rep.Wchp.Errors)
		require.NotNil(t, rep.Locks[0].WatchersTotal)
		assert.Equal(t, *full.Locks[0].WatchersTotal, *rep.Locks[0].WatchersTotal, "counted once")
	})
}
