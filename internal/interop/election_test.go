package interop

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// curatorLatchPeer runs Curator's LeaderLatch: each hold is one term, a
// latch started, awaited and closed.
func curatorLatchPeer() peer {
	return peer{name: "curator-latch", command: func(t *testing.T, servers, path string, contenders, holds int, hold time.Duration) *exec.Cmd {
		cp := curatorClasspath(t)
		return exec.Command("java", "-cp", cp, "LockDriver", servers, path, strconv.Itoa(contenders),
			strconv.Itoa(holds), strconv.FormatInt(hold.Milliseconds(), 10), "--latch")
	}}
}

// Candidates of this module's election and Curator's LeaderLatch on one
// path: the merged history of terms is checked for two leaders at once.
func TestMixedElections(t *testing.T) {
	servers := strings.Join(zktest.Servers(t), ",")
	v := ours{"election", func(conn *zk.Conn, path string, _ int) (zklocks.Locker, func(context.Context) context.Context, error) {
		e, err := election.New(session(conn), path)
		return e, nil, err
	}}
	h := mix(t, servers, &v, curatorLatchPeer(), nil)
	n := locktest.Overlaps(h)
	t.Logf("election with curator-latch: %d terms, %d double leaders", len(h), n)
	if n != 0 {
		t.Errorf("%d double leaders in %d terms:\n%v", n, len(h), locktest.Check(h))
	}
}
