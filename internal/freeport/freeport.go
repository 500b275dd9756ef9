// Package freeport finds loopback ports for the servers the tests start
// (the ZooKeeper ensembles, the rival lock servers).
//
// A port is drawn at random from a band below the kernel's ephemeral
// range (32768 and up, where outgoing connections take their source
// ports), so that a server's port is not taken by some connection's
// source port between the draw and the server's bind, and so that test
// binaries running side by side rarely draw the same one. Each kind of
// server has a band of its own, for the same reason: a partitioned
// ensemble's proxy gives its port up while a link is cut and binds it
// again at the heal. A port is only free at the moment it was checked;
// a server that still finds it taken must be started again on new ones.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
)

// Bands of the servers the project starts.
var (
	Ensembles = Band{Lo: 20000, Hi: 32000} // internal/ensemble: members and proxies
	Rivals    = Band{Lo: 10000, Hi: 20000} // internal/rivals: etcd, Redis, PostgreSQL
)

// Band is the ports [Lo, Hi).
type Band struct{ Lo, Hi int }

// Take returns n distinct ports of b that were free a moment ago. When b
// is crowded it falls back on ports the kernel picks.
func (b Band) Take(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := b.listen()
		if err != nil {
			return nil, fmt.Errorf("no free loopback port: %w", err)
		}
		held = append(held, l) // held until all are drawn, so none is drawn twice
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (b Band) listen() (net.Listener, error) {
	for range 200 {
		p := b.Lo + rand.IntN(b.Hi-b.Lo)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			return l, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}
