package ensemble

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// ErrNoLinks is returned by Partition, Heal and SlowLink on an ensemble
// started without Config.ProxiedLinks.
var ErrNoLinks = errors.New("ensemble: member links are not proxied (Config.ProxiedLinks)")

// Member links. With Config.ProxiedLinks every connection from one member
// to another goes through a TCP proxy in this process (toxiproxy, used as
// a library): member i's zoo.cfg names member j by the address of the
// proxy for the way i→j, one for j's quorum port and one for its election
// port (a quorum proxy reaches its member through a redialer, which
// retries a refused connect as a follower would). Cutting a way closes its
// connections and refuses new ones (or, silently, delivers nothing); a
// latency toxic slows it. An election connection's dial-back is kept
// inside the proxies by the advertiser. A proxy, and not a network
// namespace per member, because it needs no root, and because this kernel
// has no netem qdisc: latency needs the proxy either way.
//
// Which way carries a pair's traffic depends on who dialled (a follower
// dials its leader; for elections the member with the larger id keeps the
// connection it dialled), so Partition and SlowLink act on both ways of a
// pair.

// way is the road from one member to another: a proxy in front of each
// of the destination's two peer ports.
type way struct {
	quorum, election *toxiproxy.Proxy
}

func (w *way) proxies() []*toxiproxy.Proxy { return []*toxiproxy.Proxy{w.quorum, w.election} }

// links are the ways between every ordered pair of members.
type links struct {
	server      *toxiproxy.ApiServer
	redialers   []*redialer   // one per member, in front of its quorum port
	advertisers []*advertiser // one per member, in front of its election port
	mu          sync.Mutex
	ways        map[[2]int]*way // [from, to], member indices
}

// newLinks starts the proxies of every way between ms, on fresh ports, and
// tells each member which ports reach the others.
func newLinks(ms []*member) (*links, error) {
	n := len(ms)
	ports, err := freePorts(2 * n * (n - 1))
	if err != nil {
		return nil, err
	}
	l := &links{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		ways:   map[[2]int]*way{},
	}
	for _, to := range ms {
		r, err := newRedialer(fmt.Sprintf("127.0.0.1:%d", to.quorumPort))
		if err != nil {
			l.close()
			return nil, err
		}
		l.redialers = append(l.redialers, r)
		a, err := newAdvertiser(fmt.Sprintf("127.0.0.1:%d", to.electionPort))
		if err != nil {
			l.close()
			return nil, err
		}
		l.advertisers = append(l.advertisers, a)
	}
	for i, from := range ms {
		from.via = map[int][2]int{}
		for j, to := range ms {
			if i == j {
				continue
			}
			q, e := ports[0], ports[1]
			ports = ports[2:]
			w := &way{
				quorum:   l.proxy(fmt.Sprintf("%d-%d-quorum", from.id, to.id), q, l.redialers[j].port()),
				election: l.proxy(fmt.Sprintf("%d-%d-election", from.id, to.id), e, l.advertisers[j].port()),
			}
			l.ways[[2]int{i, j}] = w // before Start: close stops what did start
			for _, p := range w.proxies() {
				if err := p.Start(); err != nil {
					l.close()
					return nil, fmt.Errorf("ensemble: proxy %s: %w", p.Name, err)
				}
			}
			from.via[to.id] = [2]int{q, e}
			l.advertisers[i].wayBack(to.id, e) // to dials from back through this way
		}
	}
	return l, nil
}

func (l *links) proxy(name string, listen, upstream int) *toxiproxy.Proxy {
	return toxiproxy.NewProxy(l.server, name, fmt.Sprintf("127.0.0.1:%d", listen), fmt.Sprintf("127.0.0.1:%d", upstream))
}

func (l *links) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.ways {
		for _, p := range w.proxies() {
			p.Stop()
		}
	}
	for _, r := range l.redialers {
		r.close()
	}
	for _, a := range l.advertisers {
		a.close()
	}
}

// Partition splits the ensemble into groups of member indices (0-based,
// as for Kill): members of one group reach each other, members of
// different groups do not, and a member in no group reaches nobody. The
// cut is loud: the ways between groups close their connections and refuse
// new ones, so both sides notice at once. It replaces any earlier
// partition; SlowLink's delays stay. Clients keep reaching every member
// that runs: cut a client off with its own dialer.
//
// It cuts both kinds of link between members: the Zab links, on which a
// follower reaches its leader (every proposal, acknowledgement and
// heartbeat), and the election links, on which they vote. Since
// ZooKeeper 3.5 a member dials a smaller id back at the address that id
// advertised, its real port; the advertiser in front of each member's
// election port rewrites that address to a proxy (see advertiser), so
// the dial-back crosses the same cut, and a cut member can neither vote
// in the others' elections nor win one they would have to follow.
func (e *Ensemble) Partition(groups ...[]int) error {
	return e.partition(groups, func(w *way, open bool) error {
		if err := setSilent(w, false); err != nil {
			return err
		}
		return setOpen(w, open)
	})
}

// PartitionSilently is Partition with a silent cut: the ways between
// groups keep their connections open and accept new ones, but deliver
// nothing, as a link that drops packets would. Healed, a silent way has
// closed the connections that lived through the silence (see setSilent). Each side notices only
// when its read timeouts run out (syncLimit ticks for ZooKeeper).
func (e *Ensemble) PartitionSilently(groups ...[]int) error {
	return e.partition(groups, func(w *way, open bool) error {
		if err := setOpen(w, true); err != nil {
			return err
		}
		return setSilent(w, !open)
	})
}

func (e *Ensemble) partition(groups [][]int, set func(w *way, open bool) error) error {
	l, err := e.linksOrErr()
	if err != nil {
		return err
	}
	group := map[int]int{}
	for g, members := range groups {
		for _, i := range members {
			if i < 0 || i >= len(e.members) {
				return fmt.Errorf("ensemble: no member %d", i)
			}
			if _, dup := group[i]; dup {
				return fmt.Errorf("ensemble: member %d is in two groups", i)
			}
			group[i] = g
		}
	}
	together := func(i, j int) bool {
		gi, oki := group[i]
		gj, okj := group[j]
		return oki && okj && gi == gj
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for pair, w := range l.ways {
		if err := set(w, together(pair[0], pair[1])); err != nil {
			return err
		}
	}
	return nil
}

// Heal undoes Partition, PartitionSilently and every SlowLink.
func (e *Ensemble) Heal() error {
	l, err := e.linksOrErr()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.ways {
		if err := setSilent(w, false); err != nil {
			return err
		}
		if err := setOpen(w, true); err != nil {
			return err
		}
		for _, p := range w.proxies() {
			p.Toxics.ResetToxics(context.Background())
		}
	}
	return nil
}

// SlowLink delays every message between members i and j by d, each way
// (a round trip between them takes 2d longer); d = 0 removes the delay.
func (e *Ensemble) SlowLink(i, j int, d time.Duration) error {
	if d > 0 && d < time.Millisecond {
		return fmt.Errorf("ensemble: slow link: %v is below the proxies' resolution of 1ms", d)
	}
	l, err := e.linksOrErr()
	if err != nil {
		return err
	}
	if i == j || i < 0 || j < 0 || i >= len(e.members) || j >= len(e.members) {
		return fmt.Errorf("ensemble: no link between members %d and %d", i, j)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pair := range [][2]int{{i, j}, {j, i}} {
		for _, p := range l.ways[pair].proxies() {
			if err := setLatency(p, d); err != nil {
				return fmt.Errorf("ensemble: slow link %d-%d: %w", i, j, err)
			}
		}
	}
	return nil
}

func (e *Ensemble) linksOrErr() (*links, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, ErrClosed
	case e.links == nil:
		return nil, ErrNoLinks
	}
	return e.links, nil
}

// setOpen starts or stops a way's proxies. A stopped proxy has closed its
// connections and refuses new ones.
func setOpen(w *way, open bool) error {
	for _, p := range w.proxies() {
		switch {
		case open && !p.Enabled:
			if err := p.Start(); err != nil {
				return fmt.Errorf("ensemble: reopen %s: %w", p.Name, err)
			}
		case !open && p.Enabled:
			p.Stop()
		}
	}
	return nil
}

// setSilent makes a way's proxies drop everything they are sent, keeping
// their connections open (toxiproxy's timeout toxic with no timeout), or
// deliver again. Ending a silence closes the connections that lived
// through it (the toxic's Cleanup closes its stream), so no connection
// goes on with a hole where the dropped bytes were, which TCP never
// makes; new connections start clean.
// TestEndOfSilenceClosesTheConnectionsThatLivedThroughIt holds
// toxiproxy to that.
func setSilent(w *way, silent bool) error {
	for _, p := range w.proxies() {
		for _, stream := range []string{"upstream", "downstream"} {
			name := "silence-" + stream
			on := p.Toxics.GetToxic(name) != nil
			switch {
			case silent && !on:
				spec := fmt.Sprintf(`{"name":%q,"type":"timeout","stream":%q,"attributes":{"timeout":0}}`, name, stream)
				if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
					return fmt.Errorf("ensemble: silence %s: %w", p.Name, err)
				}
			case !silent && on:
				if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
					return fmt.Errorf("ensemble: unsilence %s: %w", p.Name, err)
				}
			}
		}
	}
	return nil
}

// setLatency replaces p's latency toxics, one per direction, by d.
func setLatency(p *toxiproxy.Proxy, d time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		name := "latency-" + stream
		if p.Toxics.GetToxic(name) != nil {
			if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				return err
			}
		}
		if d <= 0 {
			continue
		}
		spec := fmt.Sprintf(`{"name":%q,"type":"latency","stream":%q,"attributes":{"latency":%d}}`, name, stream, d.Milliseconds())
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			return err
		}
	}
	return nil
}

// SlowProxy is a TCP proxy in this process in front of one address, whose
// messages it delays by a latency that can be changed at any time: a slow
// link between one client and one member, for a client that dials
// Addr instead of the member.
type SlowProxy struct {
	p *toxiproxy.Proxy
}

// NewSlowProxy starts a proxy in front of upstream, without delay.
func NewSlowProxy(upstream string) (*SlowProxy, error) {
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "slow-"+upstream, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("ensemble: proxy in front of %s: %w", upstream, err)
	}
	return &SlowProxy{p: p}, nil
}

// Addr is the address to dial instead of the upstream.
func (s *SlowProxy) Addr() string { return s.p.Listen }

// SetLatency delays every message by d, each way; 0 removes the delay.
func (s *SlowProxy) SetLatency(d time.Duration) error {
	if d > 0 && d < time.Millisecond {
		return fmt.Errorf("ensemble: slow proxy: %v is below its resolution of 1ms", d)
	}
	return setLatency(s.p, d)
}

// Close stops the proxy and closes its connections.
func (s *SlowProxy) Close() { s.p.Stop() }
