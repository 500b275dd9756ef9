package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/zktest"
)

// zklocks inspect names the real clients' nodes by their kind: a Curator
// InterProcessMutex holding the lock and a kazoo Lock waiting behind it.
func TestInspectNamesRealClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := strings.Join(zktest.Servers(t), ",")
	path := zktest.LockPath(t)
	bin := filepath.Join(t.TempDir(), "zklocks")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/zklocks/zklocks/cmd/zklocks").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/zklocks: %v\n%s", err, out)
	}

	// Each peer is killed when the test ends; its holds do not matter.
	peerCtx, stopPeers := context.WithCancel(ctx)
	holder, holderDone := runPeer(t, peerCtx, curatorPeer(), servers, path, 1, 1, time.Minute)
	defer func() { stopPeers(); _, _ = holderDone() }() // killed: its error says so
	<-holder
	admin := zktest.Connect(t)
	waitFor(t, ctx, func() bool { return len(zktest.Children(t, admin, path)) == 1 }, "Curator's node")
	waiter, waiterDone := runPeer(t, peerCtx, kazooPeer(true), servers, path, 1, 1, time.Millisecond)
	defer func() { stopPeers(); _, _ = waiterDone() }()
	<-waiter
	waitFor(t, ctx, func() bool { return len(zktest.Children(t, admin, path)) == 2 }, "kazoo's node behind it")

	out, err := exec.CommandContext(ctx, bin, "inspect", "-json", "-watchers=false", "-servers", servers, path).Output()
	if err != nil {
		t.Fatalf("zklocks inspect: %v\n%s", err, out)
	}
	var rep struct {
		Locks []struct {
			Contenders []struct {
				Role string `json:"role"`
				Node string `json:"node"`
				Kind string `json:"kind"`
			} `json:"contenders"`
		} `json:"locks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("inspect -json: %v\n%s", err, out)
	}
	if len(rep.Locks) != 1 || len(rep.Locks[0].Contenders) != 2 {
		t.Fatalf("inspect saw %+v; want one lock with two contenders", rep.Locks)
	}
	for i, want := range []struct{ role, kind string }{{"holds", "curator"}, {"waits", "kazoo"}} {
		c := rep.Locks[0].Contenders[i]
		if c.Role != want.role || c.Kind != want.kind {
			t.Errorf("contender #%d %s: %s, %s; want %s, %s", i, c.Node, c.Role, c.Kind, want.role, want.kind)
		}
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, cond func() bool, what string) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
