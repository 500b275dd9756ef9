package lockq

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/hold"
	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// When the session has expired and the client has a new one before the
// hold's monitor heard of it, Release's delete runs on the new session
// and finds no node. That is the session's end, not a deletion: the
// timeout lock would otherwise call it an eviction. The monitor is
// stopped before the expiry here, which is what Release sees when the
// monitor's goroutine has not yet run.
func TestReleaseAfterAnUnheardExpiryNamesTheExpiry(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	conn := zktest.Connect(t)
	q := New(zkop.New(conn, zktest.Clock(t, conn)), zktest.LockPath(t),
		Config{ACL: zk.WorldACL(zk.PermAll)})
	n := NewNode(nil)
	if err := q.Join(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.mon.Release()
	zktest.ExpireSession(t, conn)
	err := q.Release(ctx, n)
	if !errors.Is(err, zklocks.ErrLockLost) || !errors.Is(err, hold.ErrSessionExpired) {
		t.Fatalf("Release after the session expired = %v; want the loss, wrapping %v", err, hold.ErrSessionExpired)
	}
}
