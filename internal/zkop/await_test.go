package zkop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// AwaitSession is the gate of every retry after a lost connection: it
// lets a request through once the client has a session, and tells a
// closed connection (no retry) from one that is only down (retry).
func TestAwaitSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("connected", func(t *testing.T) {
		conn := zktest.Connect(t)
		c := zkop.New(conn, zktest.Clock(t, conn))
		if err := c.AwaitSession(ctx, zkop.DialRound); err != nil {
			t.Fatalf("AwaitSession on a live connection: %v", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		conn := zktest.Connect(t)
		conn.Close()
		zktest.WaitNoSession(t, conn)
		err := zkop.New(conn, zktest.Clock(t, conn)).AwaitSession(ctx, 0)
		if !errors.Is(err, zkop.ErrConnClosed) || !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("AwaitSession on a closed connection: %v, want zkop.ErrConnClosed wrapping zk.ErrConnectionClosed", err)
		}
		if zkop.Transient(err) {
			t.Error("a closed connection must not be retried")
		}
	})
	t.Run("cut off", func(t *testing.T) {
		cut := zktest.NewCutter()
		conn := zktest.Connect(t, zktest.WithDialer(cut.Dialer()), zktest.WithSessionTimeout(4*time.Second))
		cut.Cut()
		defer cut.Heal()
		zktest.WaitNoSession(t, conn)
		err := zkop.New(conn, zktest.Clock(t, conn)).AwaitSession(ctx, 300*time.Millisecond)
		if !errors.Is(err, zk.ErrNoServer) || !zkop.Transient(err) {
			t.Fatalf("AwaitSession while cut off: %v, want a Transient error wrapping zk.ErrNoServer", err)
		}
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		if err := zkop.New(conn, zktest.Clock(t, conn)).AwaitSession(cctx, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("AwaitSession with a cancelled ctx: %v, want context.Canceled", err)
		}
	})
}
