package zkop_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zkpath"
	"github.com/zklocks/zklocks/internal/zktest"
)

// wiredSession is the session timeout of the wired clients: long enough
// that none of the tests' faults expires the session.
const wiredSession = 4 * time.Second

// wired is a client whose connection goes through a Wire, a lock path of
// its own (made), and an admin connection of the test ensemble to look
// with.
type wired struct {
	w     *zktest.Wire
	conn  *zk.Conn
	c     *zkop.Client
	admin *zk.Conn
	path  string
}

// newWired connects a wired client (opts add to its connection's).
func newWired(ctx context.Context, t *testing.T, opts ...zktest.ConnOption) *wired {
	t.Helper()
	w := zktest.NewWire(t)
	opts = append([]zktest.ConnOption{zktest.WithDialer(w.Dialer()), zktest.WithSessionTimeout(wiredSession)}, opts...)
	conn := zktest.Connect(t, opts...)
	wd := &wired{w: w, conn: conn, c: zkop.New(conn, zktest.Clock(t, conn)), admin: zktest.Connect(t), path: zktest.LockPath(t)}
	if err := wd.c.EnsureParents(ctx, wd.path, zkpath.Ancestors(wd.path), true, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	return wd
}

// awaitGone waits, polling after a sync, until node is gone; it returns
// ctx's error if node is still there when ctx ends.
func (wd *wired) awaitGone(ctx context.Context, node string) error {
	for {
		if _, err := wd.admin.Sync(node); err != nil {
			return err
		}
		ok, _, err := wd.admin.Exists(node)
		if err != nil || !ok {
			return err
		}
		if err := zkop.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}
