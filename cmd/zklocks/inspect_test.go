package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklocks/zklocks/internal/zktest"
	"github.com/zklocks/zklocks/naive"
	"github.com/zklocks/zklocks/reentrant"
	"github.com/zklocks/zklocks/sequential"
)

func TestInspectShowsHolderAndWaitersInOrder(t *testing.T) {
	servers := "-servers=" + strings.Join(zktest.Servers(t), ",")
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	holderConn := zktest.Connect(t)
	holder, err := reentrant.New(holderConn, path, reentrant.WithSessionTimeout(zktest.DefaultSessionTimeout))
	require.NoError(t, err)
	hctx := reentrant.WithOwner(ctx, "job-42")
	require.NoError(t, holder.Lock(hctx))
	defer holder.Unlock(hctx)

	waiter, err := sequential.New(zktest.Connect(t), path, sequential.WithData([]byte("second in line")))
	require.NoError(t, err)
	wctx, stopWaiting := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- waiter.Lock(wctx) }()
	defer func() { stopWaiting(); <-waited }()
	require.Eventually(t, func() bool { return len(zktest.Children(t, holderConn, path)) == 2 },
		10*time.Second, 20*time.Millisecond, "the waiter never queued")

	code, out, errOut := zklocks(t, "inspect", servers, path)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out) // title, header, holder, waiter
	assert.Contains(t, lines[0], "2 contender(s)")
	assert.Contains(t, lines[2], "holds")
	assert.Contains(t, lines[2], fmt.Sprint(holder.Token()))
	assert.Contains(t, lines[2], "owner=job-42")
	assert.Contains(t, lines[2], fmt.Sprintf("%#x", holderConn.SessionID()))
	assert.Contains(t, lines[3], "waits")
	assert.Contains(t, lines[3], "second in line")
}

func TestInspectNaiveLockAndFreePaths(t *testing.T) {
	servers := "-servers=" + strings.Join(zktest.Servers(t), ",")
	path := zktest.LockPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	m, err := naive.New(zktest.Connect(t), path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	code, out, errOut := zklocks(t, "inspect", servers, path, path+"-never-used")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 contender(s)")
	assert.Contains(t, out, fmt.Sprint(m.Token()))
	assert.Contains(t, out, path+"-never-used: no such lock")
	require.NoError(t, m.Unlock(ctx))
}

func TestInspectRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no path":       {"inspect", "-servers=127.0.0.1:1"},
		"relative path": {"inspect", "-servers=127.0.0.1:1", "locks/a"},
		"reserved path": {"inspect", "-servers=127.0.0.1:1", "/zookeeper/quota"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := zklocks(t, args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, "zklocks inspect:")
		})
	}
}

func TestInspectGivesUpOnUnreachableServers(t *testing.T) {
	code, _, errOut := zklocks(t, "inspect", "-servers=127.0.0.1:1", "-timeout=300ms", "/locks/a")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "context deadline exceeded")
}
