package zklocks

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/lockerr"
)

// ConnectOption configures Connect.
type ConnectOption func(*connectOptions)

type connectOptions struct {
	zk        []func(*zk.Conn)
	logger    zk.Logger
	loggerSet bool
}

// WithZKOptions passes options to zk.Connect: zk.WithDialer,
// zk.WithHostProvider, zk.WithEventCallback, ... Connect learns the
// granted session timeout from go-zookeeper's log, so its own logger
// comes after these: give yours with WithZKLogger, not zk.WithLogger. It
// turns go-zookeeper's information lines on (zk.WithLogInfo(true)), since
// it needs one of them; WithZKLogger's logger gets them all.
func WithZKOptions(opts ...func(*zk.Conn)) ConnectOption {
	return func(o *connectOptions) { o.zk = append(o.zk, opts...) }
}

// WithZKLogger sends go-zookeeper's log to l; nil discards it. By
// default it is discarded, as the locks log nothing unless given a logger
// (WithLogger): go-zookeeper logs every failed dial and reconnection, and
// a library should not write to a program's stderr on its own. A
// Connect that fails passes no line on after it returns.
func WithZKLogger(l zk.Logger) ConnectOption {
	return func(o *connectOptions) { o.logger, o.loggerSet = l, true }
}

// Connect opens a connection to servers, asking for sessionTimeout, and
// waits until the servers have granted it a session; it returns the
// Session, whose Timeout is the timeout they granted (they clamp the one
// asked for to [2, 20] ticks by default). It fails with ctx's error as
// soon as ctx ends first; the connection is then closed in the
// background (go-zookeeper gives a connection that never had a session a
// second to close).
//
// A Session made by Connect also knows when its connection was made, a
// moment at which the leader had surely not yet created, so not yet
// begun to expire, any of its sessions: its first hold starts at once,
// where one on a connection made elsewhere waits up to a quarter of a
// session timeout for the keeper's proof that the leader refreshes the
// session (see Locker). Close the Session when done: that closes the
// connection and waits for its goroutines. The connection's event
// channel is the Session's; to see the events, pass zk.WithEventCallback
// in WithZKOptions.
func Connect(ctx context.Context, servers []string, sessionTimeout time.Duration, opts ...ConnectOption) (*Session, error) {
	if sessionTimeout < time.Millisecond {
		// go-zookeeper would time every handshake out at once, for ever.
		return nil, lockerr.Wrap("zklocks", "connect", "", fmt.Errorf("%w: session timeout %v (want at least 1ms; the servers grant 2 ticks or more)", ErrBadOption, sessionTimeout))
	}
	var o connectOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	granted := &grantLog{next: o.logger, granted: make(chan time.Duration, 1)}
	born := time.Now()
	conn, events, err := zk.Connect(servers, sessionTimeout, func(c *zk.Conn) {
		for _, apply := range o.zk {
			apply(c)
		}
		zk.WithLogger(granted)(c)
		zk.WithLogInfo(true)(c)
	})
	if err != nil {
		return nil, lockerr.Wrap("zklocks", "connect", "", err)
	}
	select {
	case timeout := <-granted.granted:
		s := newSession(conn, timeout, born)
		s.events = events
		return s, nil
	case <-ctx.Done():
		granted.mute()  // the connection's last dials are nobody's business now
		go conn.Close() // without a session, go-zookeeper takes a second to close
		return nil, lockerr.Wrap("zklocks", "connect", "", fmt.Errorf("no session from %v: %w", servers, ctx.Err()))
	}
}

// authenticated is the line go-zookeeper logs each time the servers give
// it a session, after it has taken the timeout they granted
// (zk.Conn.loop, v1.0.4). TestConnectLearnsTheGrantedTimeout fails if a
// new version says it otherwise.
const authenticated = "authenticated: id=%d, timeout=%d"

// grantLog is a zk.Logger that reads the granted timeout off the
// authenticated line and passes every line on.
type grantLog struct {
	next    zk.Logger
	granted chan time.Duration // the first grant; later ones are the same servers' answer again
	muted   atomic.Bool        // Connect gave up: pass nothing on
}

func (g *grantLog) mute() { g.muted.Store(true) }

func (g *grantLog) Printf(format string, args ...any) {
	if format == authenticated && len(args) == 2 {
		if ms, ok := args[1].(int32); ok {
			select {
			case g.granted <- time.Duration(ms) * time.Millisecond:
			default:
			}
		}
	}
	if g.next != nil && !g.muted.Load() {
		g.next.Printf(format, args...)
	}
}
