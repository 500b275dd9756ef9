// Package zkconn tells a closed go-zookeeper connection from one on its
// way back to a server, which go-zookeeper v1.0.4 does not say.
//
// After Close a connection reads StateDisconnected for good. A lost
// connection reads it too, but only for an instant: between the end of
// its session loop and the next dial (conn.go sets StateDisconnected,
// flushes, and sets StateConnecting with no wait in between). Two looks a
// poll apart that both see StateDisconnected therefore nearly always mean
// closed, but not always: on a loaded machine the goroutine of that
// instant can be kept off the CPU for longer than a poll, and a clean-up
// that gave up then would leave a node of a live session behind for the
// session's life. Closed asks the connection itself.
package zkconn

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

// probeWait is how long Closed waits for its probe's answer. A closed
// connection answers at once; a live one keeps the probe queued until it
// is back.
const probeWait = 20 * time.Millisecond

// Closed reports whether conn has been closed. Call it only after two
// looks a poll apart both saw StateDisconnected: it sends a request (an
// exists of "/"), which go-zookeeper fails at once with
// ErrConnectionClosed once Close has run, and keeps queued while the
// connection is only between servers (it is sent when the connection is
// back, and answered then). A request sent while Close is still under
// way can upset go-zookeeper's event loop (see internal/zkop's
// AwaitSession); by the second look the loop of a closed connection has
// long returned.
func Closed(conn *zk.Conn) bool {
	if conn.State() != zk.StateDisconnected {
		return false
	}
	answer := make(chan error, 1)
	go func() {
		_, _, err := conn.Exists("/")
		answer <- err
	}()
	t := time.NewTimer(probeWait)
	defer t.Stop()
	select {
	case err := <-answer:
		return errors.Is(err, zk.ErrConnectionClosed) && conn.State() == zk.StateDisconnected
	case <-t.C:
		return false // queued: the connection is on its way back
	}
}
