package hold_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// Release ends the hold at once, even while the monitor waits for the
// answer to the read that re-arms its watch after a data change: Unlock
// and a failed Lock's clean-up call it, and must not wait up to a session
// timeout for a request on a link that has gone silent.
func TestReleaseDoesNotWaitForARequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const st = 6 * time.Second // go-zookeeper's read timeout: 4s
	w := zktest.NewWire(t)
	conn := zktest.Connect(t, zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(st))
	path := zktest.LockPath(t)
	c := zkop.New(conn, zktest.Clock(t, conn))
	if err := c.EnsureParents(ctx, path, zkpath.Ancestors(path), false, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	mon, _, _, err := hold.Watch(ctx, c, path)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}

	// After the data change reaches the client, its re-arming read goes
	// nowhere, nor does anything after it.
	var mu sync.Mutex
	changed := false
	stalled := make(chan struct{})
	w.OnReply(func(r *zktest.Reply) zktest.Verdict {
		if r.Request.Op == zktest.OpNotification && r.Request.Path == path && r.EventType == zk.EventNodeDataChanged {
			mu.Lock()
			changed = true
			mu.Unlock()
		}
		return zktest.Pass
	})
	w.OnRequest(func(r zktest.Request) zktest.Verdict {
		mu.Lock()
		defer mu.Unlock()
		if changed && r.Op == zktest.OpGetData && r.Path == path {
			changed = false
			close(stalled)
			return zktest.Stall
		}
		return zktest.Pass
	})
	if _, err := zktest.Connect(t).Set(path, []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stalled:
	case <-ctx.Done():
		t.Fatal("the monitor did not re-arm its watch after the data change")
	}

	released := make(chan struct{})
	go func() { mon.Release(); close(released) }()
	select {
	case <-released:
	case <-ctx.Done():
		t.Fatal("Release never returned")
	}
	if s := conn.State(); s != zk.StateHasSession {
		t.Errorf("Release returned only once go-zookeeper had given up the silent connection (state %v): it waited for the re-arming read", s)
	}
}
