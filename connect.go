package zklocks

import (
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/liveness"
)

// Connect is zk.Connect that also tells the locks of this module when the
// connection was made. A hold ends by the latest moment at which the
// client can prove that the leader refreshed its session (see Locker's
// Done); on a connection made with zk.Connect that proof takes two syncs
// a quarter of a session timeout apart, which the first hold on it waits
// for. The leader refreshes a session when it creates it, after this
// call, so on a connection made by Connect the first hold starts at once
// if the first lock on it is made soon enough (within about half a
// session timeout: the locks' keeper of the clock starts with the first
// lock). A connection's later sessions, after an expiry, are proven the
// usual way.
//
// The options are zk.Connect's (zk.WithDialer, zk.WithLogInfo, ...).
// Pass the locks the session timeout given here (each variant's
// WithSessionTimeout), and ask for one within the servers' bounds (2 to
// 20 ticks by default), so that it is the one they grant.
func Connect(servers []string, sessionTimeout time.Duration, options ...func(*zk.Conn)) (*zk.Conn, <-chan zk.Event, error) {
	born := time.Now()
	conn, events, err := zk.Connect(servers, sessionTimeout, func(c *zk.Conn) {
		for _, o := range options {
			o(c)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	liveness.Born(conn, born)
	return conn, events, nil
}
