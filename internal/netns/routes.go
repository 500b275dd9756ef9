package netns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Route is one entry of a namespace's routing tables (all of them: main,
// local, ...), as ip -j route show table all gives it.
type Route struct {
	Dst   string `json:"dst"`
	Dev   string `json:"dev"`
	Table string `json:"table"`
	Type  string `json:"type"`
}

// Routes lists every IPv4 and IPv6 route of namespace ns.
func Routes(ctx context.Context, ns string) ([]Route, error) {
	var all []Route
	for _, family := range []string{"-4", "-6"} {
		out, err := output(ctx, "ip", "-n", ns, "-j", family, "route", "show", "table", "all")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(out) == "" {
			continue
		}
		var rs []Route
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			return nil, fmt.Errorf("netns: routes of %s: %w: %s", ns, err, out)
		}
		all = append(all, rs...)
	}
	return all, nil
}

// CheckIsolated checks every namespace of the Net, the hub's included:
// each route leads into Reserved (198.18.0.0/15), or is the loopback
// interface's own; no default route, nothing else. A namespace with such
// routes only can reach no host of this machine's networks, nor beyond.
func (n *Net) CheckIsolated(ctx context.Context) error {
	n.mu.Lock()
	nss := []string{n.hub}
	for _, nd := range n.nodes {
		nss = append(nss, nd.NS)
	}
	n.mu.Unlock()
	var errs []error
	for _, ns := range nss {
		rs, err := Routes(ctx, ns)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range rs {
			if !allowed(r) {
				errs = append(errs, fmt.Errorf("netns: %s has a route outside %v: %+v", ns, Reserved, r))
			}
		}
	}
	return errors.Join(errs...)
}

var loopback = netip.MustParsePrefix("127.0.0.0/8")

func allowed(r Route) bool {
	if r.Dst == "default" || r.Dst == "" {
		return false
	}
	p, err := netip.ParsePrefix(r.Dst)
	if err != nil {
		a, aerr := netip.ParseAddr(r.Dst)
		if aerr != nil {
			return false
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if r.Dev == "lo" && (loopback.Contains(p.Addr()) && p.Bits() >= 8 || p.Addr() == netip.IPv6Loopback()) {
		return true
	}
	return Reserved.Contains(p.Addr()) && p.Bits() >= Reserved.Bits()
}
