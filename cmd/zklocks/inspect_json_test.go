package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/timeout"
)

// jsonReport is the schema of docs/inspect.md, written out again here
// rather than taken from the command's own types: decoding with
// DisallowUnknownFields fails on a field the schema does not list, and
// TestInspectJSONSchema fails on a listed key that is missing.
type jsonReport struct {
	Version int      `json:"version"`
	Servers []string `json:"servers"`
	Wchp    *struct {
		Members         int      `json:"members"`
		Answered        int      `json:"answered"`
		Errors          []string `json:"errors"`
		EnsembleMembers *int     `json:"ensemble_members"`
		Complete        bool     `json:"complete"`
	} `json:"wchp"`
	Locks []jsonLock `json:"locks"`
}

type jsonLock struct {
	Path          string          `json:"path"`
	Exists        bool            `json:"exists"`
	Layout        *string         `json:"layout"`
	NowMs         *int64          `json:"now_ms"`
	Contenders    []jsonContender `json:"contenders"`
	WatchersTotal *int            `json:"watchers_total"`
}

type jsonContender struct {
	Index           int      `json:"index"`
	Role            string   `json:"role"`
	Node            string   `json:"node"`
	Seq             *int64   `json:"seq"`
	Token           int64    `json:"token"`
	Session         string   `json:"session"`
	Kind            string   `json:"kind"`
	CtimeMs         int64    `json:"ctime_ms"`
	MtimeMs         int64    `json:"mtime_ms"`
	CreatedMsAgo    *int64   `json:"created_ms_ago"`
	WrittenMsAgo    *int64   `json:"written_ms_ago"`
	Watchers        *int     `json:"watchers"`
	WatcherSessions []string `json:"watcher_sessions"`
	DataBytes       int      `json:"data_bytes"`
	Data            *string  `json:"data"`
	Owner           *struct {
		Owner string `json:"owner"`
		Host  string `json:"host"`
		PID   int    `json:"pid"`
		Mode  string `json:"mode"`
		Count *int   `json:"count"`
	} `json:"owner"`
	Lease *struct {
		Ms          int64  `json:"ms"`
		Held        bool   `json:"held"`
		RemainingMs *int64 `json:"remaining_ms"`
		Expired     *bool  `json:"expired"`
	} `json:"lease"`
}

// The keys every object of the report has (owner and lease only where the
// kind has them), as docs/inspect.md lists them.
var (
	reportKeys    = []string{"version", "servers", "wchp", "locks"}
	wchpKeys      = []string{"members", "answered", "errors", "ensemble_members", "complete"}
	lockKeys      = []string{"path", "exists", "layout", "now_ms", "contenders", "watchers_total"}
	contenderKeys = []string{"index", "role", "node", "seq", "token", "session", "kind", "ctime_ms", "mtime_ms",
		"created_ms_ago", "written_ms_ago", "watchers", "watcher_sessions", "data_bytes", "data"}
	ownerKeys = []string{"owner", "host", "pid", "mode", "count"}
	leaseKeys = []string{"ms", "held", "remaining_ms", "expired"}
)

func TestInspectJSONSchema(t *testing.T) {
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A reentrant holder and a timeout waiter: every kind of object.
	holderConn := zktest.Connect(t)
	holder, err := reentrant.New(zktest.Session(t, holderConn), path)
	require.NoError(t, err)
	require.NoError(t, holder.Lock(reentrant.WithOwner(ctx, "job-1")))
	waiter, err := timeout.New(zktest.Connected(t), path, timeout.WithLease(2*time.Second))
	require.NoError(t, err)
	waitIn(t, ctx, waiter.Lock)
	waitQueued(t, holderConn, path, 2)

	rep, raw := inspectJSON(t, ctx, path, path+"-missing")
	assert.Equal(t, 1, rep.Version)
	assert.Equal(t, zktest.Servers(t), rep.Servers)
	require.Len(t, rep.Locks, 2)

	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	requireKeys(t, doc, reportKeys, "report")
	requireKeys(t, doc["wchp"], wchpKeys, "wchp")
	locks := doc["locks"].([]any)
	for _, l := range locks {
		requireKeys(t, l, lockKeys, "lock")
	}
	contenders := locks[0].(map[string]any)["contenders"].([]any)
	require.Len(t, contenders, 2)
	for _, c := range contenders {
		requireKeys(t, c, contenderKeys, "contender")
	}
	requireKeys(t, contenders[0].(map[string]any)["owner"], ownerKeys, "owner")
	requireKeys(t, contenders[1].(map[string]any)["lease"], leaseKeys, "lease")
	assert.NotContains(t, contenders[0], "lease", "a reentrant node has no lease object")
	assert.NotContains(t, contenders[1], "owner", "a timeout node has no owner object")

	// A missing path: exists false, no layout, an empty list (not null).
	missing := locks[1].(map[string]any)
	assert.Equal(t, false, missing["exists"])
	assert.Nil(t, missing["layout"])
	assert.Equal(t, []any{}, missing["contenders"])
	assert.Equal(t, path+"-missing", rep.Locks[1].Path)
}

// requireKeys fails unless v is a JSON object with every key in keys.
func requireKeys(t *testing.T, v any, keys []string, what string) {
	t.Helper()
	obj, ok := v.(map[string]any)
	require.True(t, ok, "%s is not a JSON object: %v", what, v)
	for _, k := range keys {
		assert.Contains(t, obj, k, "%s lacks the key %q", what, k)
	}
}

func TestInspectJSONWithoutWatchCounts(t *testing.T) {
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder, err := reentrant.New(zktest.Connected(t), path)
	require.NoError(t, err)
	require.NoError(t, holder.Lock(reentrant.WithOwner(ctx, "job-1")))

	rep, _ := inspectJSON(t, ctx, "-watchers=false", path)
	assert.Nil(t, rep.Wchp, "wchp is null when the counts were not asked for")
	require.Len(t, rep.Locks[0].Contenders, 1)
	assert.Nil(t, rep.Locks[0].WatchersTotal)
	assert.Nil(t, rep.Locks[0].Contenders[0].Watchers)
	assert.Nil(t, rep.Locks[0].Contenders[0].WatcherSessions)

	code, out, errOut := zklocksCtx(ctx, "inspect", "-watchers=false", serversFlag(t), path)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "watches", "the title counts no watches when none were asked for")
	assert.False(t, strings.Contains(out, "?"), "not asked is not unknown:\n%s", out)
}
