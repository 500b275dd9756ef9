package netns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Cut is a fault the kernel makes: the packets of From's nodes to To's
// nodes are dropped (or rejected) by an nftables rule in the input hook
// of the receiving namespace, so neither end's socket sees them, and
// nothing in user space relays or closes anything.
type Cut struct {
	From, To []*Node
	// Loud rejects TCP segments with a reset instead of dropping them: a
	// socket that sends across the cut learns at once that the connection
	// is gone (ECONNRESET), where a silent cut leaves it retransmitting
	// until a timeout of its own.
	Loud bool
	// OneWay loses only what From sends to To; To's packets to From
	// still arrive (and From's acknowledgements of them do not).
	OneWay bool
}

func (c Cut) String() string {
	dir, how := "<->", "drop"
	if c.OneWay {
		dir = "->"
	}
	if c.Loud {
		how = "reset"
	}
	return fmt.Sprintf("%v %s %v (%s)", c.From, dir, c.To, how)
}

// Cut adds c to the cuts in force and loads the rules of every namespace
// it touches. Heal removes all cuts.
func (n *Net) Cut(ctx context.Context, c Cut) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(c.From) == 0 || len(c.To) == 0 {
		return fmt.Errorf("netns: cut %v has an empty side", c)
	}
	n.cuts = append(n.cuts, c)
	return n.load(ctx)
}

// Partition cuts every node of each group from every node of each other
// group, both ways; nodes in no group keep all their links. With loud,
// the cuts answer with resets.
func (n *Net) Partition(ctx context.Context, loud bool, groups ...[]*Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			if len(groups[i]) == 0 || len(groups[j]) == 0 {
				continue
			}
			n.cuts = append(n.cuts, Cut{From: groups[i], To: groups[j], Loud: loud})
		}
	}
	return n.load(ctx)
}

// Detach takes the node's veth off the bridge: every frame it sends is
// lost at the hub, ARP included, and nothing reaches it. It is the
// cable pulled out, silent for both ends. Attach puts it back.
func (n *Net) Detach(ctx context.Context, nd *Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := run(ctx, "ip", "-n", n.hub, "link", "set", nd.port, "nomaster"); err != nil {
		return err
	}
	n.detached[nd] = true
	return nil
}

// Attach puts a detached node's veth back on the bridge.
func (n *Net) Attach(ctx context.Context, nd *Node) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.attach(ctx, nd)
}

func (n *Net) attach(ctx context.Context, nd *Node) error {
	if err := run(ctx, "ip", "-n", n.hub, "link", "set", nd.port, "master", "br0"); err != nil {
		return err
	}
	delete(n.detached, nd)
	return nil
}

// Heal removes every cut and puts every detached node back.
func (n *Net) Heal(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cuts = nil
	var errs []error
	for nd := range n.detached {
		errs = append(errs, n.attach(ctx, nd))
	}
	errs = append(errs, n.load(ctx))
	return errors.Join(errs...)
}

// Cuts returns the cuts in force.
func (n *Net) Cuts() []Cut {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.cuts)
}

// load renders each node's input rules from the cuts in force and loads
// them into the namespaces whose rules changed, each in one nft
// transaction (the table is replaced whole).
func (n *Net) load(ctx context.Context) error {
	type rule struct {
		from []*Node
		loud bool
	}
	in := map[*Node][]rule{}
	for _, c := range n.cuts {
		for _, to := range c.To {
			in[to] = append(in[to], rule{c.From, c.Loud})
		}
		if !c.OneWay {
			for _, from := range c.From {
				in[from] = append(in[from], rule{c.To, c.Loud})
			}
		}
	}
	var errs []error
	for _, nd := range n.nodes {
		var b strings.Builder
		for _, r := range in[nd] {
			var addrs []string
			for _, f := range r.from {
				addrs = append(addrs, f.IP.String())
			}
			set := "{ " + strings.Join(addrs, ", ") + " }"
			if r.loud {
				// The resets the other end's rule sends back must pass,
				// or neither end would hear of the cut.
				fmt.Fprintf(&b, "\t\tip saddr %s tcp flags & rst == rst accept\n", set)
				fmt.Fprintf(&b, "\t\tip saddr %s meta l4proto tcp reject with tcp reset\n", set)
			}
			fmt.Fprintf(&b, "\t\tip saddr %s drop\n", set)
		}
		rules := b.String()
		if rules == n.rules[nd] {
			continue
		}
		script := "table inet zklocks\ndelete table inet zklocks\n"
		if rules != "" {
			script += "table inet zklocks {\n\tchain input {\n\t\ttype filter hook input priority 0; policy accept;\n" +
				rules + "\t}\n}\n"
		}
		if _, err := outputIn(ctx, []byte(script), "ip", "netns", "exec", nd.NS, "nft", "-f", "-"); err != nil {
			errs = append(errs, fmt.Errorf("%w\n%s", err, script))
			continue
		}
		n.rules[nd] = rules
	}
	return errors.Join(errs...)
}
