package faulttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/ensemble"
	"github.com/zklocks/zklocks/internal/netns"
)

// faultEnsemble is an ensemble whose links between members a test can
// cut: the loopback one, with a toxiproxy relay on every link
// (ensemble.Ensemble with ProxiedLinks), or the one of network
// namespaces, where the kernel drops the packets (netns.Ensemble).
type faultEnsemble interface {
	WaitServing(ctx context.Context) error
	Leader() (int, error)
	Size() int
	Servers() []string
	PartitionSilently(groups ...[]int) error
	Heal() error
}

// loudEnsemble is a faultEnsemble that also cuts loudly: toxiproxy's
// relays stopped, or the kernel's resets.
type loudEnsemble interface {
	faultEnsemble
	Partition(groups ...[]int) error
}

// cutEnv is where a scenario runs: its ensemble, and how its clients
// dial (from the test's own network, or each from a namespace of its
// own).
type cutEnv struct {
	harness string // "toxiproxy" or "netns", for the reports
	e       faultEnsemble
	// dialer returns the dialer of the client named name; nil means a
	// plain dial from this process.
	dialer func(t *testing.T, name string) zk.Dialer
	// node returns the namespace of the client named name (netnsEnv only).
	node func(t *testing.T, name string) *netns.Node
}

// relayEnv is the loopback ensemble with relays, the clients dialing
// from this process.
func relayEnv(e *ensemble.Ensemble) cutEnv {
	return cutEnv{harness: "toxiproxy", e: e, dialer: func(*testing.T, string) zk.Dialer { return nil }}
}

// netnsEnv is the namespace ensemble; each client name gets a node of its
// own on first use (holder, waiter, admin...), kept for the ensemble's
// life: a node's connections end with the test that opened them.
func netnsEnv(e *netns.Ensemble) cutEnv {
	var mu sync.Mutex
	nodes := map[string]*netns.Node{"admin": e.Admin}
	node := func(t *testing.T, name string) *netns.Node {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if nd, ok := nodes[name]; ok {
			return nd
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		nd, err := e.Client(ctx, name)
		if err != nil {
			t.Fatalf("a node for client %s: %v", name, err)
		}
		nodes[name] = nd
		return nd
	}
	return cutEnv{harness: "netns", e: e, node: node, dialer: func(t *testing.T, name string) zk.Dialer {
		t.Helper()
		return node(t, name).DialTimeout
	}}
}
