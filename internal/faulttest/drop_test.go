package faulttest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/locktest"
	"github.com/zklocks/zklocks/internal/zktest"
)

// dropMode says which half of a create the dropper loses.
type dropMode int

const (
	// dropRequest: the create never reaches the server; the connection
	// then breaks. The client can not tell this from dropReply.
	dropRequest dropMode = iota + 1
	// dropReply: the server applies the create, and the connection breaks
	// before its answer reaches the client.
	dropReply
	// dropReplyStaleLook: as dropReply, and the client's first read of
	// the lock path after that (its look for the create) is answered
	// NoNode, as a follower that has not applied the create yet would
	// answer a read without a sync before it.
	dropReplyStaleLook
)

func (m dropMode) String() string {
	switch m {
	case dropRequest:
		return "request-lost"
	case dropReply:
		return "reply-lost"
	}
	return "reply-lost-stale-look"
}

// errDropped is what the client's connection reports when the dropper
// breaks it.
var errDropped = errors.New("faulttest: connection dropped around a create")

// ZooKeeper's wire protocol: after the handshake, a request is
// [length][xid][opcode][body] and a reply [length][xid][zxid][err][body];
// a create's body starts with its path, [length][bytes].
const (
	opCreate       = 1
	opExists       = 3
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
	opCreate2      = 15
)

// errNoNode is the reply code of ZooKeeper's NoNode error (a variable:
// the negative code goes on the wire as its two's complement).
var errNoNode int32 = -101

// dropper is a zk.Dialer whose connections break once, around a create
// whose path match accepts: the first such request (dropRequest), or the
// first such create that the server applies (dropReply).
type dropper struct {
	mode  dropMode
	match func(path string) bool
	look  string // dropReplyStaleLook: the path whose first read is answered NoNode

	// hold, when set, keeps a dropReply connection waiting, its reply
	// already intercepted, until hold is closed; intercepted is closed
	// when that happens. The outage test uses it to break the connection
	// only after the ensemble has lost its quorum.
	hold, intercepted chan struct{}

	mu      sync.Mutex
	armed   bool
	fired   bool
	staled  bool // the stale answer has been given
	firedCh chan struct{}
}

func newDropper(mode dropMode, match func(string) bool) *dropper {
	return &dropper{mode: mode, match: match, armed: true, firedCh: make(chan struct{})}
}

func (d *dropper) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	nc, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: nc, d: d}, nil
}

// matches reports whether a create of path is one to drop.
func (d *dropper) matches(path string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.armed && d.match(path)
}

// take disarms the dropper; false if it was disarmed already.
func (d *dropper) take() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	was := d.armed
	d.armed = false
	return was
}

func (d *dropper) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.fired {
		d.fired = true
		close(d.firedCh)
	}
}

// staleLook reports whether a read of path is the one to answer NoNode,
// and if so counts it as given.
func (d *dropper) staleLook(path string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mode != dropReplyStaleLook || !d.fired || d.staled || path != d.look {
		return false
	}
	d.staled = true
	return true
}

func (d *dropper) gaveStale() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.staled
}

func (d *dropper) hasFired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired
}

// dropConn is one connection of a dropper's client.
type dropConn struct {
	net.Conn
	d *dropper

	wrote, read bool // the handshake has gone out / come back

	mu      sync.Mutex
	pending map[int32]bool // xids of matching creates in flight
	stale   map[int32]bool // xid of the read to answer NoNode
	rbuf    []byte
}

func (c *dropConn) Write(p []byte) (int, error) {
	if !c.wrote {
		c.wrote = true
		return c.Conn.Write(p)
	}
	if len(p) >= 16 {
		xid := int32(binary.BigEndian.Uint32(p[4:8]))
		op := int32(binary.BigEndian.Uint32(p[8:12]))
		plen := int(int32(binary.BigEndian.Uint32(p[12:16])))
		isPath := plen >= 0 && 16+plen <= len(p)
		if isPath && isRead(op) && c.d.staleLook(string(p[16:16+plen])) {
			c.mu.Lock()
			c.stale = map[int32]bool{xid: true}
			c.mu.Unlock()
		}
		if (op == opCreate || op == opCreate2) && isPath && c.d.matches(string(p[16:16+plen])) {
			switch c.d.mode {
			case dropRequest:
				if c.d.take() {
					c.Conn.Close()
					c.d.fire()
					return len(p), nil // "sent"; the reply will never come
				}
			case dropReply, dropReplyStaleLook:
				c.mu.Lock()
				if c.pending == nil {
					c.pending = map[int32]bool{}
				}
				c.pending[xid] = true
				c.mu.Unlock()
			}
		}
	}
	return c.Conn.Write(p)
}

// Read passes the server's replies on, except the first successful reply
// to a matching create (dropReply): that one breaks the connection, after
// the server has applied the create.
func (c *dropConn) Read(p []byte) (int, error) {
	if len(c.rbuf) == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > 64<<20 {
			return 0, fmt.Errorf("faulttest: reply of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.Conn, body); err != nil {
			return 0, err
		}
		if c.read && len(body) >= 16 {
			xid := int32(binary.BigEndian.Uint32(body[:4]))
			ok := binary.BigEndian.Uint32(body[12:16]) == 0 // the reply's error code
			c.mu.Lock()
			ours, stale := c.pending[xid], c.stale[xid]
			delete(c.pending, xid)
			delete(c.stale, xid)
			c.mu.Unlock()
			if stale {
				// The reply's header with error NoNode, and no body.
				body = body[:16]
				binary.BigEndian.PutUint32(body[12:16], uint32(errNoNode))
				binary.BigEndian.PutUint32(hdr[:], 16)
			}
			if ours && ok && c.d.take() {
				if c.d.hold != nil {
					close(c.d.intercepted)
					<-c.d.hold
				}
				c.Conn.Close()
				c.d.fire()
				return 0, errDropped
			}
		}
		c.read = true
		c.rbuf = append(hdr[:], body...)
	}
	n := copy(p, c.rbuf)
	c.rbuf = c.rbuf[n:]
	return n, nil
}

// isRead reports whether op is a read that names a path first in its body.
func isRead(op int32) bool {
	return op == opExists || op == opGetData || op == opGetChildren || op == opGetChildren2
}

// The connection breaks between a Lock's create and its reply, both ways
// (the create lost on the way, or applied and its answer lost). The client
// can not tell which; the lock must leave neither a duplicate node (the
// create applied and then made again) nor an orphan (a node nobody will
// delete while the session lives, which would block the queue). Every
// variant finds its node once it is back and holds the lock: the
// sequential family by the GUID in the node's name, naive by the random
// stamp in its node's data.
func TestCreateConnectionLoss(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v *variant) {
		for _, mode := range []dropMode{dropRequest, dropReply, dropReplyStaleLook} {
			t.Run(mode.String(), func(t *testing.T) {
				ctx := testCtx(t, 60*time.Second)
				tp := newTape()
				path := zktest.LockPath(t)
				admin := zktest.Connect(t)
				d := newDropper(mode, func(p string) bool {
					if v.layout == locktest.NodeAtPath {
						return p == path
					}
					return strings.HasPrefix(p, path+"/")
				})
				d.look = path // naive reads the node there, the queue family lists it
				c := newClient(t, tp, v, path, "client", withDialer(d.dial))
				sid := c.conn.SessionID()
				start := tp.now()
				err := c.l.Lock(c.ctx(ctx))
				took := tp.now() - start
				if !d.hasFired() {
					t.Fatalf("the connection was not dropped (Lock: %v)", err)
				}
				if mode == dropReplyStaleLook && !d.gaveStale() {
					t.Fatalf("no read of %s after the drop, so none was answered NoNode (Lock: %v)", path, err)
				}
				if c.conn.SessionID() != sid {
					t.Fatalf("the session changed (%#x -> %#x): the test needs it to survive", sid, c.conn.SessionID())
				}
				outcome := "acquired"
				if err == nil {
					h := tp.enter(c)
					if own := ownNodes(t, admin, c, sid); len(own) != 1 {
						t.Errorf("holding with %d nodes of its session: %v; want exactly 1", len(own), own)
					}
					if all, _ := lockNodes(admin, v, path); len(all) != 1 {
						t.Errorf("%d lock nodes on %s while held by one client: %v", len(all), path, all)
					}
					tp.leave(h, stillHeld)
					if err := c.l.Unlock(c.ctx(ctx)); err != nil {
						t.Errorf("Unlock: %v", err)
					}
				} else {
					outcome = fmt.Sprintf("%q", err.Error())
					t.Errorf("Lock after a connection loss during its create: %v; want its node found and the lock held", err)
				}
				// Nothing of the client is left to block the queue:
				// another client gets the lock.
				o := newClient(t, tp, v, path, "other")
				octx := testCtx(t, c.st+5*time.Second)
				if err := o.l.Lock(o.ctx(octx)); err != nil {
					t.Errorf("other: Lock after the dropped create: %v", err)
				} else {
					h := tp.enter(o)
					tp.leave(h, stillHeld)
					if err := o.l.Unlock(o.ctx(ctx)); err != nil {
						t.Errorf("other: Unlock: %v", err)
					}
				}
				holds, double, belief := checkHistory(t, tp, v, path)
				left := nodesLeft(t, admin, v, path, c.st+2*time.Second)
				report{fault: "create-" + mode.String(), variant: v.name, holds: holds, double: double, left: left,
					recover: took, belief: belief, extra: []string{"lock=" + outcome}}.log(t)
			})
		}
	})
}
