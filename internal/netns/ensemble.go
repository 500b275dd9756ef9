package netns

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklocks/zklocks/internal/ensemble"
)

// Ensemble is a ZooKeeper ensemble whose members each run in a network
// namespace of their own (nodes m1, m2, ...), started by
// internal/ensemble through its seam (Config.Hosts, Wrap, Dial). The
// test process reaches the members from the admin node; clients get
// nodes of their own (Client).
type Ensemble struct {
	*ensemble.Ensemble
	Net     *Net
	Members []*Node // member i's node
	Admin   *Node   // the test's own view: four-letter words, admin sessions
}

// StartEnsemble makes a Net, a node per member and the admin node, and
// starts cfg's ensemble in it (cfg.Hosts, Wrap and Dial are set here).
// On failure nothing is left behind.
func StartEnsemble(ctx context.Context, cfg ensemble.Config) (*Ensemble, error) {
	n, err := New(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Size <= 0 {
		cfg.Size = 3
	}
	e := &Ensemble{Net: n}
	for i := range cfg.Size {
		nd, err := n.Add(ctx, fmt.Sprintf("m%d", i+1))
		if err != nil {
			n.Close()
			return nil, err
		}
		e.Members = append(e.Members, nd)
		cfg.Hosts = append(cfg.Hosts, nd.IP.String())
	}
	if e.Admin, err = n.Add(ctx, "admin"); err != nil {
		n.Close()
		return nil, err
	}
	cfg.Wrap = func(i int, argv []string) []string { return e.Members[i].Wrap(argv) }
	cfg.Dial = e.Admin.DialContext
	if e.Ensemble, err = ensemble.Start(ctx, cfg); err != nil {
		n.Close()
		return nil, err
	}
	return e, nil
}

// Close stops the members and removes the namespaces.
func (e *Ensemble) Close() error {
	return errors.Join(e.Ensemble.Close(), e.Net.Close())
}

// Client adds a node for one client of the ensemble: dial from it with
// its DialTimeout (zk.WithDialer) or DialContext.
func (e *Ensemble) Client(ctx context.Context, name string) (*Node, error) {
	return e.Net.Add(ctx, name)
}

// nodes returns the members' nodes of a group of member indexes.
func (e *Ensemble) nodes(group []int) ([]*Node, error) {
	var out []*Node
	for _, i := range group {
		if i < 0 || i >= len(e.Members) {
			return nil, fmt.Errorf("netns: no member %d (size %d)", i, len(e.Members))
		}
		out = append(out, e.Members[i])
	}
	return out, nil
}

// opTimeout bounds the ip and nft commands of one change of the network.
const opTimeout = 30 * time.Second

// PartitionSilently cuts the members of each group (indexes) from the
// members of every other group, both ways, by dropping their packets:
// quorum and election ports alike, and nothing else (clients and the
// admin node still reach every member). The same form as
// ensemble.Ensemble's PartitionSilently, whose relays it stands in for.
func (e *Ensemble) PartitionSilently(groups ...[]int) error { return e.partition(false, groups) }

// Partition is PartitionSilently with resets: a member's segment across
// the cut is answered with a TCP reset.
func (e *Ensemble) Partition(groups ...[]int) error { return e.partition(true, groups) }

func (e *Ensemble) partition(loud bool, groups [][]int) error {
	var ns [][]*Node
	for _, g := range groups {
		nodes, err := e.nodes(g)
		if err != nil {
			return err
		}
		ns = append(ns, nodes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return e.Net.Partition(ctx, loud, ns...)
}

// Heal removes every cut and reattaches every detached node.
func (e *Ensemble) Heal() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return e.Net.Heal(ctx)
}

// Servers returns the members' client addresses (in their namespaces).
func (e *Ensemble) Servers() []string { return e.Ensemble.Servers() }

// ForTest starts an Ensemble for t and closes it when t ends. It skips
// t under -short, and when namespaces can not be made here (the message
// says why). configure changes ensemble.DefaultConfig first.
func ForTest(t testing.TB, configure ...func(*ensemble.Config)) *Ensemble {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts ZooKeeper in network namespaces; run without -short")
	}
	if err := Available(); err != nil {
		t.Skipf("skipping the namespace test: %v", err)
	}
	cfg := ensemble.DefaultConfig()
	for _, c := range configure {
		c(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := StartEnsemble(ctx, cfg)
	if err != nil {
		t.Fatalf("netns: the namespace ensemble failed to start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("netns: closing the namespace ensemble: %v", err)
		}
	})
	return e
}
