package netns

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

const killedChildEnv = "ZKLOCKS_NETNS_KILLED_CHILD"

// killedChild runs in a child test binary: it starts a namespace
// ensemble of one member with a client node, says its run and the JVM's
// pid, and waits to be killed, with no cleanup.
func killedChild() int {
	cfg := ensemble.DefaultConfig()
	cfg.Size = 1
	cfg.BaseDir = os.Getenv(killedChildEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := StartEnsemble(ctx, cfg)
	if err != nil {
		fmt.Println("ERROR", strings.ReplaceAll(err.Error(), "\n", " | "))
		return 1
	}
	if _, err := e.Client(ctx, "holder"); err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	fmt.Printf("RUN %s\nPID %d\n", e.Net.Run(), e.PID(0))
	select {} // until killed
}

// TestNothingOutlivesAKilledRun kills (SIGKILL) a test binary that runs a
// namespace ensemble, then sweeps as the next run's TestMain does: the
// member's JVM is gone with its parent, and the sweep leaves no namespace
// of the killed run (their veths and the bridge go with them) and no
// process in one.
func TestNothingOutlivesAKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper; run without -short")
	}
	if err := Available(); err != nil {
		t.Skipf("skipping the namespace test: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedChildEnv+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var runName string
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ERROR") {
			t.Fatal(line)
		}
		if r, ok := strings.CutPrefix(line, "RUN "); ok {
			runName = r
		}
		if p, ok := strings.CutPrefix(line, "PID "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid == 0 || runName == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said no run or pid (run %q)", runName)
	}
	nss, _ := Leftovers(runName + "-")
	t.Logf("child %d runs %s: namespaces %v, member JVM %d", cmd.Process.Pid, runName, nss, pid)
	if len(nss) != 4 {
		t.Errorf("want 4 namespaces (hub, m1, admin, holder) while the child runs; got %v", nss)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// The JVM had the parent-death signal: the kernel kills it.
	for !gone(pid) {
		select {
		case <-ctx.Done():
			t.Fatalf("member JVM %d outlived the killed test binary", pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if left, _ := Leftovers(runName + "-"); len(left) == 0 {
		t.Fatal("the killed run left no namespace: nothing for the sweep to do, so this test proves nothing")
	}
	removed, err := Sweep()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss {
		if !slices.Contains(removed, ns) {
			t.Errorf("Sweep did not remove %s (removed %v)", ns, removed)
		}
	}
	if left, pids := Leftovers(runName + "-"); len(left) > 0 || len(pids) > 0 {
		t.Errorf("after the sweep: namespaces %v, processes %v", left, pids)
	}
}

// gone reports whether pid no longer runs (a zombie counts as gone).
func gone(pid int) bool { return !running(pid) }
