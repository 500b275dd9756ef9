package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestTakeGivesDistinctFreePortsOfItsBand(t *testing.T) {
	for _, b := range []Band{Ensembles, Rivals} {
		ports, err := b.Take(20)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, p := range ports {
			if p < b.Lo || p >= b.Hi {
				t.Errorf("port %d outside [%d, %d)", p, b.Lo, b.Hi)
			}
			if seen[p] {
				t.Errorf("port %d drawn twice", p)
			}
			seen[p] = true
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Errorf("port %d is not free after Take: %v", p, err)
				continue
			}
			l.Close()
		}
	}
}
