package faulttest

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/zktest"
)

// diagnose logs, when a workload has stalled, what is needed to tell why:
// each contender's session, connection state and node, the nodes on the
// lock path with their owners, and the goroutines of the lock packages
// (grouped, with their stacks), and the path as each member alone sees
// it. One stall of TestRandomHalves (see docs/reliability.md) showed the
// naive clients spinning on create (node exists) and exists (no node)
// against one member whose view, after a sync, lacked the node the
// others had: each member's own view tells that apart from a lock bug.
func diagnose(t *testing.T, w *workload) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "diagnosis of %s on %s:\n", w.v.name, w.path)
	for _, c := range w.clients {
		node := "-"
		if n, ok := c.l.(interface{ Node() string }); ok {
			node = n.Node()
		}
		fmt.Fprintf(&b, "  %s: session %#x, state %v, node %q\n", c.name, c.conn.SessionID(), c.conn.State(), node)
	}
	if len(w.clients) > 0 {
		c := w.clients[0].conn
		nodes, err := lockNodes(c, w.v, w.path)
		fmt.Fprintf(&b, "  nodes on the path (as %s sees them): %v %v\n", w.clients[0].name, describe(c, w.path, nodes, w.v), err)
	}
	// Each member's connections, with the requests queued on each (a
	// session whose requests go unanswered while its pings are shows
	// here as a connection with queued requests that do not drain).
	servers := w.servers
	if servers == nil {
		servers = zktest.Servers(t)
	}
	for _, addr := range servers {
		out, err := ensemble.FourLetter(addr, "cons")
		fmt.Fprintf(&b, "  cons of %s (%v):\n%s\n", addr, err, out)
		srvr, err := ensemble.FourLetter(addr, "srvr")
		fmt.Fprintf(&b, "  srvr of %s (%v): %s\n", addr, err, oneLine(srvr))
		fmt.Fprintf(&b, "  the path as %s alone sees it, after a sync: %s\n", addr, memberView(w, addr))
	}
	var stacks bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
	for _, g := range strings.Split(stacks.String(), "\n\n") {
		if strings.Contains(g, "zklocks/internal/zkop") || strings.Contains(g, "zklocks/internal/lockq") ||
			strings.Contains(g, "zklocks/internal/hold") || strings.Contains(g, "zklocks/naive") {
			b.WriteString(g)
			b.WriteString("\n\n")
		}
	}
	t.Log(b.String())
}

// memberView reads the lock path on one member alone: a member whose view
// differs from the others' after a sync (a node the leader has and it
// lacks) is an inconsistent replica, not a lock that stalled.
func memberView(w *workload, addr string) string {
	s, err := memberAlone(addr)
	if err != nil {
		return err.Error()
	}
	defer s.Close()
	conn := s.Conn()
	nodes, err := lockNodes(conn, w.v, w.path)
	return fmt.Sprintf("%v %v", describe(conn, w.path, nodes, w.v), err)
}

// memberAlone opens a session on the member at addr only, for a look at
// what that member alone holds; the caller closes it.
func memberAlone(addr string) (*zklocks.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return zklocks.Connect(ctx, []string{addr}, 2*time.Second, zklocks.WithZKLogger(nil))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
