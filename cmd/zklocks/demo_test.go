package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/sequential"
)

// TestDemoFencing runs the demo end to end: holder A is this test binary
// again (TestMain turns it into zklocks), frozen with SIGSTOP until its
// session expires. The fenced store must refuse A's late write and keep
// B's; the unfenced one must lose B's update; the servers must refuse
// A's write to the znode store.
func TestDemoFencing(t *testing.T) {
	servers := "-servers=" + strings.Join(zktest.Servers(t), ",")
	t.Setenv(childEnv, "1") // the child holder runs main()
	code, out, errOut := zklocks(t, "demo", "fencing", servers, "-session=1s")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, out, `fenced:   holds "B's update"`)
	assert.Contains(t, out, `unfenced: holds "A's update"`)
	assert.Contains(t, out, "REFUSED: fence: stale fencing token")
	assert.Contains(t, out, `znode:    holds "B's update"`)
	assert.Contains(t, out, "the servers refused the write")
}

// TestDemoRejectsBadInput: a mistake in the command line is a usage error
// (exit status 2) that says what is wrong, before any ensemble is used.
func TestDemoRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no demo", []string{"demo"}, "which demo?"},
		{"unknown demo", []string{"demo", "nope"}, `unknown demo "nope"`},
		{"short session", []string{"demo", "fencing", "-session=10ms"}, "-session must be at least 400ms"},
		{"extra args", []string{"demo", "fencing", "extra"}, "unexpected arguments"},
		{"herd no contenders", []string{"demo", "herd", "-n=0"}, "-n must be from 1 to 256, not 0"},
		{"herd too many", []string{"demo", "herd", "-n=100000"}, "-n must be from 1 to 256"},
		{"herd unknown lock", []string{"demo", "herd", "-variant=optimistic"}, `-variant: unknown variant "optimistic" (have naive, sequential)`},
		{"herd negative rounds", []string{"demo", "herd", "-rounds=-1"}, "-rounds must not be negative"},
		{"herd negative hold", []string{"demo", "herd", "-hold=-1s"}, "-hold must not be negative"},
		{"herd unknown flag", []string{"demo", "herd", "-contenders=3"}, "flag provided but not defined: -contenders"},
		{"herd extra args", []string{"demo", "herd", "extra"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := zklocks(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, "zklocks demo: "+tc.want)
			assert.Empty(t, out, "nothing on stdout: no ensemble was picked")
		})
	}
}

func TestDemoHelp(t *testing.T) {
	for _, args := range [][]string{{"demo", "-h"}, {"demo", "herd", "-h"}, {"demo", "fencing", "-help"}} {
		code, _, errOut := zklocks(t, args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Contains(t, errOut, "usage: zklocks demo", "%v", args)
	}
	_, _, errOut := zklocks(t, "demo", "-h")
	assert.Contains(t, errOut, "herd ")
	assert.Contains(t, errOut, "fencing ")
}

// zklocks revoke asks the holder and names its node; with nobody holding
// it fails, and a missing path is a usage error.
func TestRevokeCommand(t *testing.T) {
	servers := "-servers=" + strings.Join(zktest.Servers(t), ",")
	path := zktest.LockPath(t)
	code, _, errOut := zklocks(t, "revoke", servers, path)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "lock not held: nobody holds it")

	holder, err := sequential.New(zktest.Session(t, zktest.Connect(t)), path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, holder.Lock(ctx))
	code, out, errOut := zklocks(t, "revoke", servers, path)
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Contains(t, out, holder.Node())
	select {
	case <-holder.Revoked():
	case <-ctx.Done():
		t.Fatal("the holder was never told")
	}
	require.NoError(t, holder.Unlock(ctx))

	code, _, errOut = zklocks(t, "revoke", servers)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "revoke takes one lock path")
}
