package netns

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// newTestNet makes a Net with the given nodes, closed when t ends; it
// skips t where namespaces can not be made.
func newTestNet(t *testing.T, roles ...string) (*Net, []*Node) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipping the namespace test: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if nss, pids := Leftovers(n.Run()); len(nss) > 0 || len(pids) > 0 {
			t.Errorf("left after Close: namespaces %v, processes %v", nss, pids)
		}
	})
	var nodes []*Node
	for _, r := range roles {
		nd, err := n.Add(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, nd)
	}
	return n, nodes
}

// pair is one TCP connection from a (client) to b (server).
type pair struct{ a, b net.Conn }

func connect(t *testing.T, a, b *Node) pair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := b.Listen(ctx, "tcp", net.JoinHostPort(b.IP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	ca, err := a.DialContext(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("%v dials %v: %v", a, b, err)
	}
	var cb net.Conn
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatal("accept failed")
		}
		cb = c
	case <-ctx.Done():
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return pair{ca, cb}
}

// send writes one byte on from and says whether to reads it within d;
// err is to's read error when it got none.
func send(t *testing.T, from, to net.Conn, d time.Duration) (bool, error) {
	t.Helper()
	if _, err := from.Write([]byte{'x'}); err != nil {
		return false, err
	}
	if err := to.SetReadDeadline(time.Now().Add(d)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	_, err := io.ReadFull(to, buf)
	if err != nil {
		return false, err
	}
	return true, nil
}

const (
	arrives = 2 * time.Second        // a byte across a whole link arrives well within this
	lost    = 300 * time.Millisecond // a byte across a cut has not arrived in this
)

func mustArrive(t *testing.T, what string, from, to net.Conn) {
	t.Helper()
	if ok, err := send(t, from, to, arrives); !ok {
		t.Fatalf("%s: the byte did not arrive: %v", what, err)
	}
}

func mustBeLostSilently(t *testing.T, what string, from, to net.Conn) {
	t.Helper()
	ok, err := send(t, from, to, lost)
	if ok {
		t.Fatalf("%s: the byte arrived across the cut", what)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: want the read to time out (no reset, no close); got %v", what, err)
	}
}

func TestAddressesAndRoutesStayInTheBenchmarkingRange(t *testing.T) {
	n, nodes := newTestNet(t, "a", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, nd := range nodes {
		if !Reserved.Contains(nd.IP) {
			t.Errorf("%v: address outside %v", nd, Reserved)
		}
	}
	if err := n.CheckIsolated(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing outside the subnet is reachable: the kernel has no route.
	for _, dst := range []string{"192.0.2.1:80", "10.0.0.1:80", "8.8.8.8:53", "[2001:db8::1]:80"} {
		c, err := nodes[0].DialContext(ctx, "tcp", dst)
		if err == nil {
			c.Close()
			t.Errorf("%v reached %s", nodes[0], dst)
			continue
		}
		if !errors.Is(err, syscall.ENETUNREACH) && !errors.Is(err, syscall.EADDRNOTAVAIL) && !errors.Is(err, syscall.EAFNOSUPPORT) {
			t.Errorf("%v dialing %s: %v; want network unreachable", nodes[0], dst, err)
		}
	}
	// The check itself fails on a route out.
	if err := run(ctx, "ip", "-n", nodes[1].NS, "route", "add", "default", "dev", "eth0"); err != nil {
		t.Fatal(err)
	}
	if err := n.CheckIsolated(ctx); err == nil {
		t.Fatal("CheckIsolated passed a namespace with a default route")
	}
}

func TestKernelCuts(t *testing.T) {
	n, nodes := newTestNet(t, "a", "b", "c")
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	heal := func(t *testing.T) {
		t.Helper()
		if err := n.Heal(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Each subtest begins whole, whatever the one before it did.
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			t.Cleanup(func() { _ = n.Heal(ctx) })
			f(t)
		})
	}

	run("silent drop", func(t *testing.T) {
		p, q := connect(t, a, b), connect(t, a, c)
		if err := n.Cut(ctx, Cut{From: []*Node{a}, To: []*Node{b}}); err != nil {
			t.Fatal(err)
		}
		mustBeLostSilently(t, "a->b", p.a, p.b)
		mustBeLostSilently(t, "b->a", p.b, p.a)
		mustArrive(t, "a->c beside the cut", q.a, q.b)
		heal(t)
		// Nothing was reset: once healed, TCP retransmits and the bytes
		// sent during the cut arrive on the same connection.
		mustArrive(t, "a->b after the heal", p.a, p.b)
	})

	// What a relay could not do: a relay that times a link out closes
	// its own two connections, so one end's close (or the relay's)
	// reaches the other end as an EOF during the cut. Across the kernel's
	// silent cut the FIN is lost like any other segment: the other end
	// hears nothing until its own timeout, or the heal.
	run("close across a silent cut", func(t *testing.T) {
		p := connect(t, a, b)
		if err := n.Cut(ctx, Cut{From: []*Node{a}, To: []*Node{b}}); err != nil {
			t.Fatal(err)
		}
		p.a.Close()
		p.b.SetReadDeadline(time.Now().Add(lost))
		if _, err := p.b.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("b's read after a closed its end across the silent cut: %v; want a timeout, no EOF", err)
		}
		heal(t)
		p.b.SetReadDeadline(time.Now().Add(arrives))
		if _, err := p.b.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("b's read after the heal: %v; want the retransmitted FIN (EOF)", err)
		}
	})

	run("loud reject", func(t *testing.T) {
		p := connect(t, a, b)
		if err := n.Cut(ctx, Cut{From: []*Node{a}, To: []*Node{b}, Loud: true}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		p.a.Write([]byte{'x'})
		p.a.SetReadDeadline(time.Now().Add(arrives))
		_, err := p.a.Read(make([]byte, 1))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("a's read after its send across a loud cut: %v; want connection reset", err)
		}
		t.Logf("reset %v after the send", time.Since(start).Round(time.Microsecond))
		// Loud to a sender only: b, which sent nothing, has heard of
		// nothing (a relay that stops closes both ends at once); its own
		// next send is answered with a reset.
		p.b.SetReadDeadline(time.Now().Add(lost))
		if _, err := p.b.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("b's read before it sent anything: %v; want a timeout: nothing told b of the cut", err)
		}
		p.b.Write([]byte{'x'})
		p.b.SetReadDeadline(time.Now().Add(arrives))
		if _, err := p.b.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("b's read after its own send: %v; want connection reset", err)
		}
		if _, err := b.DialContext(ctx, "tcp", net.JoinHostPort(a.IP.String(), "1")); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("b dialing a across the loud cut: %v; want refused", err)
		}
		heal(t)
	})

	run("one way", func(t *testing.T) {
		p := connect(t, a, b)
		if err := n.Cut(ctx, Cut{From: []*Node{a}, To: []*Node{b}, OneWay: true}); err != nil {
			t.Fatal(err)
		}
		mustBeLostSilently(t, "a->b", p.a, p.b)
		mustArrive(t, "b->a", p.b, p.a)
		heal(t)
		mustArrive(t, "a->b after the heal", p.a, p.b)
	})

	run("detached veth", func(t *testing.T) {
		p, q := connect(t, a, b), connect(t, c, b)
		if err := n.Detach(ctx, a); err != nil {
			t.Fatal(err)
		}
		mustBeLostSilently(t, "a->b", p.a, p.b)
		mustBeLostSilently(t, "b->a", p.b, p.a)
		mustArrive(t, "c->b", q.a, q.b)
		heal(t)
		mustArrive(t, "a->b after the heal", p.a, p.b)
	})

	run("partition", func(t *testing.T) {
		p, q, r := connect(t, a, b), connect(t, a, c), connect(t, b, c)
		if err := n.Partition(ctx, false, []*Node{a}, []*Node{b, c}); err != nil {
			t.Fatal(err)
		}
		mustBeLostSilently(t, "a->b", p.a, p.b)
		mustBeLostSilently(t, "c->a", q.b, q.a)
		mustArrive(t, "b->c inside the majority", r.a, r.b)
		heal(t)
		mustArrive(t, "a->b after the heal", p.a, p.b)
	})
}
