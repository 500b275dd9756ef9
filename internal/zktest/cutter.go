package zktest

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrCut is what a Cutter's dialer returns while the Cutter is cut.
var ErrCut = errors.New("zktest: connection cut by the test")

// Cutter simulates a network partition between one client and the
// ensemble: it hands the client a dialer that records every connection,
// Cut closes them all and refuses new ones, Heal lets the client in again.
// Keeping a client cut for longer than its session timeout makes the
// servers expire its session; the client learns it when it reconnects
// after Heal (zk.StateExpired). Use it with WithDialer; every Connect also
// has one of its own, which ExpireSession uses.
type Cutter struct {
	base   zk.Dialer
	mu     sync.Mutex
	cut    bool
	silent bool // Silence: connections stay open but carry nothing
	conns  map[*trackedConn]struct{}
}

// NewCutter returns a Cutter that dials with net.DialTimeout.
func NewCutter() *Cutter { return newCutter(nil) }

func newCutter(base zk.Dialer) *Cutter {
	if base == nil {
		base = net.DialTimeout
	}
	return &Cutter{base: base, conns: map[*trackedConn]struct{}{}}
}

// Dialer returns the dialer to pass to WithDialer.
func (c *Cutter) Dialer() zk.Dialer { return c.dial }

func (c *Cutter) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	if c.IsCut() {
		return nil, ErrCut
	}
	nc, err := c.base(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut { // cut while we were dialing
		nc.Close()
		return nil, ErrCut
	}
	tc := &trackedConn{Conn: nc, owner: c}
	c.conns[tc] = struct{}{}
	return tc, nil
}

// Cut closes the client's connections behind its back and makes its
// dialer fail until Heal. It does not block.
func (c *Cutter) Cut() {
	c.mu.Lock()
	c.cut = true
	open := c.conns
	c.conns = map[*trackedConn]struct{}{}
	c.mu.Unlock()
	for tc := range open {
		tc.Conn.Close()
	}
}

// Silence is a partition that nobody announces: the client's connections
// stay open, but what it sends is dropped and what the servers send is
// never delivered, and new dials are refused. Unlike Cut, where the client
// sees its connection close at once, the client notices only when its read
// timeout runs out, two thirds of a session timeout later: the case a
// lock's loss detection must still get right. Heal ends it; the silenced
// connections are closed then, as a real client would time them out.
func (c *Cutter) Silence() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut, c.silent = true, true
}

// Heal lets the client dial again; it reconnects on its own.
func (c *Cutter) Heal() {
	c.mu.Lock()
	c.cut = false
	var open map[*trackedConn]struct{}
	if c.silent {
		c.silent, open, c.conns = false, c.conns, map[*trackedConn]struct{}{}
	}
	c.mu.Unlock()
	for tc := range open {
		tc.Conn.Close()
	}
}

func (c *Cutter) isSilent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.silent
}

// IsCut reports whether the Cutter is cut.
func (c *Cutter) IsCut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

// trackedConn removes itself from its Cutter when the client closes it.
type trackedConn struct {
	net.Conn
	owner *Cutter
}

// Read delivers nothing while the Cutter is silent: it keeps reading, so
// the client's read deadline still applies, and drops what arrives.
func (tc *trackedConn) Read(p []byte) (int, error) {
	for {
		n, err := tc.Conn.Read(p)
		if err != nil || !tc.owner.isSilent() {
			return n, err
		}
	}
}

// Write drops the bytes while the Cutter is silent, as a partition would.
func (tc *trackedConn) Write(p []byte) (int, error) {
	if tc.owner.isSilent() {
		return len(p), nil
	}
	return tc.Conn.Write(p)
}

func (tc *trackedConn) Close() error {
	tc.owner.mu.Lock()
	delete(tc.owner.conns, tc)
	tc.owner.mu.Unlock()
	return tc.Conn.Close()
}
