package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zktest"
)

// childEnv makes the test binary behave as zklocks itself, for the
// background child that "ensemble up -background" re-executes.
const childEnv = "ZKLOCKS_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
	}
	zktest.Main(m)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func zklocks(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e syncBuffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsage(t *testing.T) {
	code, _, errOut := zklocks(t)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "ensemble")

	code, _, errOut = zklocks(t, "no-such-command")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown command "no-such-command"`)

	code, _, _ = zklocks(t, "ensemble")
	assert.Equal(t, 2, code)
	code, _, _ = zklocks(t, "ensemble", "sideways")
	assert.Equal(t, 2, code)
	code, _, _ = zklocks(t, "ensemble", "up", "-background", "-foreground")
	assert.Equal(t, 2, code)
	code, _, _ = zklocks(t, "ensemble", "up", "-size", "0")
	assert.Equal(t, 2, code)
	code, out, _ := zklocks(t, "ensemble", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "zklocks ensemble up")
}

func TestStatusWithoutEnsemble(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	state := filepath.Join(t.TempDir(), "state.json")
	code, _, errOut := zklocks(t, "ensemble", "status", "-state", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "zklocks ensemble up")

	code, out, _ := zklocks(t, "ensemble", "down", "-state", state)
	assert.Equal(t, 0, code, "down without an ensemble is not an error")
	assert.Contains(t, out, "no ensemble is running")
}

func TestEnsembleBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	t.Setenv(childEnv, "1") // the re-executed test binary runs main
	state := filepath.Join(t.TempDir(), "zklocks-ensemble.json")
	t.Cleanup(func() { zklocks(t, "ensemble", "down", "-state", state) })

	code, out, errOut := zklocks(t, "ensemble", "up", "-background", "-state", state)
	require.Equal(t, 0, code, errOut)
	t.Log(out)
	assert.Contains(t, out, "export ZK_SERVERS=127.0.0.1:")
	st, err := readState(state)
	require.NoError(t, err)
	require.Len(t, st.Members, 3)
	assert.NotEqual(t, os.Getpid(), st.Supervisor, "a detached child owns the ensemble")

	code, out, errOut = zklocks(t, "ensemble", "status", "-state", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, strings.Count(out, "leader"), out)
	assert.Equal(t, 2, strings.Count(out, "follower"), out)

	code, _, errOut = zklocks(t, "ensemble", "up", "-background", "-state", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "already running")

	code, out, errOut = zklocks(t, "ensemble", "down", "-state", state)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "stopped")
	for _, m := range st.Members {
		assert.False(t, running(m.PID), "member pid %d after down", m.PID)
	}
	assert.False(t, running(st.Supervisor))
	_, err = os.Stat(state)
	assert.True(t, os.IsNotExist(err), "state file removed")
	_, err = os.Stat(st.Dir)
	assert.True(t, os.IsNotExist(err), "ensemble dir removed")
}

func TestEnsembleForeground(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	statePath := filepath.Join(t.TempDir(), "zklocks-ensemble.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"ensemble", "up", "-size", "1", "-fsync=false", "-state", statePath}, &out, &errOut)
	}()

	var st state
	require.Eventually(t, func() bool {
		var err error
		st, err = readState(statePath)
		return err == nil
	}, 60*time.Second, 20*time.Millisecond, "no state file; stderr: %s", &errOut)
	assert.Equal(t, os.Getpid(), st.Supervisor)
	assert.False(t, st.ForceSync)
	s, err := ensemble.ServerStatus(st.Members[0].Addr)
	require.NoError(t, err)
	assert.Equal(t, "standalone", s.Mode)

	cancel() // Ctrl-C
	select {
	case code := <-done:
		assert.Equal(t, 0, code, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatal("foreground ensemble did not stop")
	}
	assert.Contains(t, out.String(), "Ctrl-C")
	assert.False(t, ensemble.Alive(st.Members[0].PID))
	_, err = os.Stat(statePath)
	assert.True(t, os.IsNotExist(err), "state file removed")
}
