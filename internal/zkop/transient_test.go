package zkop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Transient tells the errors worth a retry (the request failed for want
// of a connection) from the servers' refusals and from the caller's own
// decisions; the background clean-up also outlives a cancelled ctx and a
// closing connection.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err                  error
		transient, cleanupOK bool
	}{
		{zk.ErrConnectionClosed, true, true},
		{fmt.Errorf("lock: %w", zk.ErrNoServer), true, true},
		{zk.ErrSessionMoved, true, true},
		{&net.OpError{Op: "write", Err: errors.New("broken pipe")}, true, true},
		{context.Canceled, false, true},
		{context.DeadlineExceeded, false, true},
		{zk.ErrClosing, false, true},
		{ErrConnClosed, false, false},
		{fmt.Errorf("lock: %w", ErrConnClosed), false, false},
		{zk.ErrNoNode, false, false},
		{zk.ErrNodeExists, false, false},
		{zk.ErrBadVersion, false, false},
		{zk.ErrNoAuth, false, false},
		{zk.ErrSessionExpired, false, false},
		{nil, false, false},
	} {
		if got := Transient(tc.err); got != tc.transient {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.transient)
		}
		if got := isTransient(tc.err); got != tc.cleanupOK {
			t.Errorf("isTransient(%v) = %v, want %v", tc.err, got, tc.cleanupOK)
		}
	}
}
