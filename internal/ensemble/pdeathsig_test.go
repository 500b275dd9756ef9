package ensemble

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const helperEnv = "ZKLOCKS_ENSEMBLE_PANIC_HELPER"

// panicWithRunningEnsemble runs in a child test binary: it starts a
// one-member ensemble, prints the JVM's pid and panics without Close.
func panicWithRunningEnsemble() {
	cfg := DefaultConfig()
	cfg.Size = 1
	cfg.BaseDir = os.Getenv(helperEnv)
	e, err := Start(context.Background(), cfg)
	if err != nil {
		fmt.Println("ERROR", strings.ReplaceAll(err.Error(), "\n", " | "))
		os.Exit(1)
	}
	fmt.Printf("PID %d\n", e.PID(0))
	panic("deliberate panic with a running ensemble")
}

// gone reports whether pid no longer runs: it does not exist, or it is a
// zombie waiting for init to reap it.
func gone(pid int) bool {
	if !Alive(pid) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

func TestNoJVMOutlivesPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux-only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	pid := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ERROR") {
			t.Fatal(line)
		}
		if p, ok := strings.CutPrefix(line, "PID "); ok {
			pid, err = strconv.Atoi(p)
			require.NoError(t, err)
			break
		}
	}
	require.NotZero(t, pid, "helper printed no pid")
	for sc.Scan() {
	}
	err = cmd.Wait()
	require.Error(t, err, "the helper panicked")

	require.Eventually(t, func() bool { return gone(pid) }, 10*time.Second, 20*time.Millisecond,
		"JVM %d outlived the test binary that started it", pid)
	assert.True(t, gone(pid))
}
