package zkop

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// DeleteEventually deletes path (at version, or, when version is -1, at
// whatever version it has provided it is an ephemeral node of this
// client's session) in the background, retrying while the ensemble cannot
// be reached.
//
// It gives up in three cases, each of which means the node is gone or is
// no longer ours to delete: the delete succeeded or found no node (or a
// newer version: someone else's node now); the connection now has another
// session (the old session, and with it every ephemeral node, is gone); or
// every attempt has failed for longer than the session timeout (the server
// has expired a session it has not heard from for that long).
func (c *Client) DeleteEventually(path string, version int32) {
	sid := c.Conn.SessionID()
	go func() {
		start := time.Now()
		backoff := 20 * time.Millisecond
		for {
			ctx, cancel := context.WithTimeout(context.Background(), c.SessionTimeout)
			err := c.deleteOurs(ctx, path, version, sid)
			cancel()
			if err == nil || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
				return
			}
			if c.Conn.SessionID() != sid || time.Since(start) > c.SessionTimeout+time.Second {
				return
			}
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
		}
	}()
}

// DeleteNowOrLater deletes path at version (-1 as for DeleteEventually), waiting at most until ctx is
// done. When the delete cannot complete now (ctx done, connection down), it
// is handed to DeleteEventually and DeleteNowOrLater returns nil: the node
// will not outlive the session. Other errors (no node, bad version, no
// auth) are returned as they are.
func (c *Client) DeleteNowOrLater(ctx context.Context, path string, version int32) error {
	err := c.deleteOurs(ctx, path, version, c.Conn.SessionID())
	if isTransient(err) {
		c.DeleteEventually(path, version)
		return nil
	}
	return err
}

// isTransient reports whether err says "not now" rather than "no".
// Besides ErrConnectionClosed, go-zookeeper fails a request with
// ErrNoServer when it was queued while disconnected and a whole round of
// dials has failed, and with the raw network error when writing it to a
// connection that just broke.
func isTransient(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrNoServer) || errors.As(err, &netErr)
}

// deleteOurs deletes path at version. Version -1 never means "any node":
// the node is read first and deleted at the version read, and only if it
// is an ephemeral node of session sid. On a fixed path (the naive lock) a
// blind delete could otherwise remove the node of the next holder.
func (c *Client) deleteOurs(ctx context.Context, path string, version int32, sid int64) error {
	if version == -1 {
		_, stat, err := c.Get(ctx, path)
		if err != nil {
			return err
		}
		if stat.EphemeralOwner != sid {
			return zk.ErrNoNode // ours is gone; this one belongs to someone else
		}
		version = stat.Version
	}
	return c.Delete(ctx, path, version)
}
