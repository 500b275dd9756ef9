package faulttest

import (
	"fmt"
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

// dropper breaks a client's connection once, around a create whose path
// match accepts: the first such request (dropRequest), or the first such
// create that the server applies (dropReply). It is a set of rules on a
// zktest.Wire, which parses ZooKeeper's framing.
type dropper struct {
	mode  dropMode
	match func(path string) bool
	look  string // dropReplyStaleLook: the path whose first read is answered NoNode
	w     *zktest.Wire

	// hold, when set, keeps a dropReply connection waiting, its reply
	// already intercepted, until hold is closed; intercepted is closed
	// when that happens. The outage test uses it to break the connection
	// only after the ensemble has lost its quorum.
	hold, intercepted chan struct{}

	mu     sync.Mutex
	armed  bool
	fired  bool
	staled bool // the stale answer has been given
}

func newDropper(t testing.TB, mode dropMode, match func(string) bool) *dropper {
	d := &dropper{mode: mode, match: match, armed: true, w: zktest.NewWire(t)}
	d.w.OnRequest(d.onRequest)
	d.w.OnReply(d.onReply)
	return d
}

// dial is the zk.Dialer to give the client.
func (d *dropper) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	return d.w.Dialer()(network, addr, timeout)
}

func isCreate(op int32) bool { return op == zktest.OpCreate || op == zktest.OpCreate2 }

// isRead reports whether op is a read that names a path first in its body.
func isRead(op int32) bool {
	return op == zktest.OpExists || op == zktest.OpGetData || op == zktest.OpGetChildren || op == zktest.OpGetChildren2
}

// take disarms the dropper if it is armed for a create of path, and says
// whether it did: the break happens once.
func (d *dropper) take(path string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.armed || !d.match(path) {
		return false
	}
	d.armed = false
	return true
}

func (d *dropper) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fired = true
}

// onRequest loses a matching create on its way (dropRequest).
func (d *dropper) onRequest(r zktest.Request) zktest.Verdict {
	if d.mode == dropRequest && isCreate(r.Op) && d.take(r.Path) {
		d.fire()
		return zktest.Break // "sent"; the reply will never come
	}
	return zktest.Pass
}

// onReply loses the answer of a matching create the server applied, and,
// for dropReplyStaleLook, answers the first read of look after that with
// NoNode, as a follower that has not applied the create yet would answer
// a read without a sync before it.
func (d *dropper) onReply(r *zktest.Reply) zktest.Verdict {
	switch {
	case d.mode != dropRequest && isCreate(r.Request.Op) && r.Err == 0 && d.take(r.Request.Path):
		if d.hold != nil {
			close(d.intercepted)
			<-d.hold
		}
		d.fire()
		return zktest.Break
	case d.mode == dropReplyStaleLook && isRead(r.Request.Op) && r.Request.Path == d.look && d.staleOnce():
		r.Err, r.Body = zktest.CodeNoNode, nil
	}
	return zktest.Pass
}

// staleOnce reports whether the stale answer is due now (after the drop,
// not given yet), and counts it as given.
func (d *dropper) staleOnce() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.fired || d.staled {
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
				d := newDropper(t, mode, func(p string) bool {
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
