package main

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pauseCannotStart fails the test when the demo could not start its
// servers (the error names the install script), or skips it under -short.
func pauseCannotStart(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if code != 0 && strings.Contains(errOut, "install-rivals.sh") {
		msg := "the demo's servers did not start:\n" + errOut
		if testing.Short() {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
}

// TestDemoPause runs the story on three systems, each on servers of its
// own, holder A being this test binary again (TestMain turns it into
// zklocks) frozen with SIGSTOP, and checks what each system did: etcd and
// Redis let a second holder in while A was frozen, and only etcd's token
// kept A's late write out; PostgreSQL's frozen session kept its lock.
// Redlock tells Redis's story on five servers and is left to the fault
// test (TestFaultFrozenHolder), to keep this one short.
func TestDemoPause(t *testing.T) {
	t.Setenv(childEnv, "1") // the holder process runs main()
	for _, c := range []struct {
		system string
		want   []string
	}{
		{"redis", []string{
			"A's key expired",
			"A still believes it holds the lock",
			"store: ACCEPTED",
			"a lost update",
			"A: Unlock() -> rivals: redis unlock: the key expired",
			`The store holds "A's update"`,
			"Verdict (redis): a second holder got in while the first still believed, and with no fencing token the late write was taken",
		}},
		{"etcd", []string{
			"fencing token 2",
			"A's lease ran out unrenewed",
			"A still believes it holds the lock",
			"store: REFUSED: fence: stale fencing token: A wrote with token 2",
			"rivals: lock not held",
			`The store holds "B's update"`,
			"Verdict (etcd): a second holder got in while the first still believed; the fencing token kept the store safe",
		}},
		{"postgres", []string{
			"B: Lock() -> still waiting after 3s",
			"store: accepted: A held the lock all along",
			"A: Unlock() -> nil",
			"B: Lock() -> holds the lock, now that A has released it",
			`The store holds "B's update"`,
			"Verdict (postgres): no second holder",
		}},
	} {
		t.Run(c.system, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			start := time.Now()
			code, out, errOut := zklocksCtx(ctx, "demo", "pause", "-system", c.system)
			pauseCannotStart(t, code, out, errOut)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, w := range c.want {
				assert.Contains(t, out, w)
			}
			t.Logf("%s: %v\n%s", c.system, time.Since(start).Round(10*time.Millisecond), out)
		})
	}
}

// TestDemoPauseInterrupted: an interrupt (the ctx main cancels on
// SIGINT) while B waits on a frozen A ends the demo with the context's
// error, the holder process reaped and the server stopped.
func TestDemoPauseInterrupted(t *testing.T) {
	t.Setenv(childEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var o, e syncBuffer
	codec := make(chan int, 1)
	go func() { codec <- run(ctx, []string{"demo", "pause", "-system", "redis", "-ttl", "10s"}, &o, &e) }()
	for !strings.Contains(o.String(), "B: Lock() ...") {
		select {
		case code := <-codec:
			pauseCannotStart(t, code, o.String(), e.String())
			t.Fatalf("the demo ended (status %d) before B asked:\n%s\n%s", code, o.String(), e.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	var code int
	select {
	case code = <-codec:
	case <-time.After(20 * time.Second):
		t.Fatal("the demo did not end within 20 s of its context")
	}
	assert.Equal(t, 1, code)
	assert.Contains(t, e.String(), "context canceled")

	pid := regexp.MustCompile(`A \(pid (\d+)\)`).FindStringSubmatch(o.String())
	require.NotNil(t, pid, o.String())
	n, err := strconv.Atoi(pid[1])
	require.NoError(t, err)
	assert.ErrorIs(t, syscall.Kill(n, 0), syscall.ESRCH, "holder A (pid %d) is still there", n)
	addr := regexp.MustCompile(`ready in \S+: (\S+)`).FindStringSubmatch(o.String())
	require.NotNil(t, addr, o.String())
	if c, err := net.DialTimeout("tcp", addr[1], time.Second); err == nil {
		c.Close()
		t.Errorf("the demo's Redis at %s still answers", addr[1])
	}
}

// TestDemoPauseRejectsBadInput: a mistake is a usage error (status 2)
// that lists the systems, before any server starts.
func TestDemoPauseRejectsBadInput(t *testing.T) {
	systems := "(have zk, etcd, redis, redlock, postgres)"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no system", []string{}, "-system is required " + systems},
		{"unknown system", []string{"-system", "consul"}, `-system: unknown system "consul" ` + systems},
		{"empty system", []string{"-system="}, "-system is required " + systems},
		{"short ttl", []string{"-system", "redis", "-ttl", "10ms"}, "-ttl must be from 400ms to 1m"},
		{"unknown flag", []string{"-session", "1s"}, "flag provided but not defined: -session"},
		{"extra args", []string{"-system", "redis", "extra"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := zklocks(t, append([]string{"demo", "pause"}, tc.args...)...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, "zklocks demo: "+tc.want)
			assert.Empty(t, out, "nothing on stdout: no server was started")
		})
	}
	code, _, errOut := zklocks(t, "demo", "pause-holder")
	assert.Equal(t, 2, code, "the holder mode without its environment")
	assert.Contains(t, errOut, "not by hand")
	code, _, errOut = zklocks(t, "demo", "pause", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "usage: zklocks demo pause -system zk|etcd|redis|redlock|postgres")
}
