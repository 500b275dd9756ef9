package ensemble

import (
	"fmt"
	"math/rand/v2"
	"net"
)

// freePorts returns n distinct loopback ports that were free a moment ago.
// They are drawn at random below the kernel's usual ephemeral range
// (32768+), where outgoing connections take their source ports, so that
// two test binaries rarely pick the same port; Start retries with new
// ports when a member still finds one taken.
func freePorts(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := listenRandom()
		if err != nil {
			return nil, fmt.Errorf("ensemble: no free loopback port: %w", err)
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func listenRandom() (net.Listener, error) {
	for range 200 {
		p := 20000 + rand.IntN(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			return l, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}
