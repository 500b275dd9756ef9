package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// Helpers of the inspect tests: a queue of real contenders, nodes made by
// hand the way other libraries name them, and the command run to JSON.

// serversFlag points zklocks at the test ensemble.
func serversFlag(t *testing.T) string {
	return "-servers=" + strings.Join(zktest.Servers(t), ",")
}

// zklocksCtx runs a zklocks command line under ctx.
func zklocksCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var o, e syncBuffer
	code = run(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

// heldLock takes a sequential lock on a fresh path for the test and
// returns the path, the test's ctx (bounded by within) and the holder.
func heldLock(t *testing.T, within time.Duration) (string, context.Context, *sequential.Mutex) {
	t.Helper()
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	m, err := sequential.New(zktest.Connected(t), path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	return path, ctx, m
}

// waitIn runs lock, a contender's Lock that will wait, in a goroutine. The
// test's cleanup stops it and waits for it to return.
func waitIn(t *testing.T, ctx context.Context, lock func(context.Context) error) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lock(wctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// waitQueued waits until path has n children: the last waiter joined.
func waitQueued(t *testing.T, conn *zk.Conn, path string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(zktest.Children(t, conn, path)) == n },
		10*time.Second, 10*time.Millisecond, "the queue at %s never reached %d nodes", path, n)
}

// handMade creates an ephemeral sequential node name+<seq> under path on a
// session of its own, as another library would, and returns the session.
func handMade(t *testing.T, ctx context.Context, path, name string, data []byte) (session string) {
	t.Helper()
	conn := zktest.Connect(t)
	c := zkop.New(conn, zktest.Clock(t, conn))
	require.NoError(t, c.EnsureParents(ctx, path, zkpath.Ancestors(path), true, zk.WorldACL(zk.PermAll)))
	_, err := c.Create(ctx, path+"/"+name, data, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	return fmt.Sprintf("%#x", conn.SessionID())
}

// randHex returns n random bytes as hex.
func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Node names of the libraries inspect recognises.
func zklocksStyle() string { return "_c_" + randHex(16) + "-lock-" }
func kazooStyle() string   { return randHex(16) + "__lock__" }
func curatorStyle() string {
	h := randHex(16)
	return "_c_" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + "-lock-"
}

// inspectJSON runs zklocks inspect -json and decodes its report strictly
// (see jsonReport).
func inspectJSON(t *testing.T, ctx context.Context, args ...string) (jsonReport, []byte) {
	t.Helper()
	code, out, errOut := zklocksCtx(ctx, append([]string{"inspect", "-json", serversFlag(t)}, args...)...)
	require.Equal(t, 0, code, errOut)
	return decodeReport(t, []byte(out)), []byte(out)
}

// inspectWith runs inspect -json against the given servers.
func inspectWith(t *testing.T, ctx context.Context, servers []string, args ...string) jsonReport {
	t.Helper()
	code, out, errOut := zklocksCtx(ctx, append([]string{"inspect", "-json", "-servers=" + strings.Join(servers, ",")}, args...)...)
	require.Equal(t, 0, code, errOut)
	return decodeReport(t, []byte(out))
}

func decodeReport(t *testing.T, raw []byte) jsonReport {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rep jsonReport
	require.NoError(t, dec.Decode(&rep), "the report does not match the documented schema:\n%s", raw)
	return rep
}

// pollInspect runs inspect -json until until accepts the report, and fails
// the test when ctx ends first.
func pollInspect(t *testing.T, ctx context.Context, what string, until func(jsonReport) bool, args ...string) jsonReport {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		rep, raw := inspectJSON(t, ctx, args...)
		if until(rep) {
			return rep
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never seen before the deadline; last report:\n%s", what, raw)
		case <-tick.C:
		}
	}
}
