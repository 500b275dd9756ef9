package rivals

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// A holder cut off from its servers keeps running, and so do the servers:
// only the network between them drops everything. On loopback the cut is
// made by TCP proxies in this process (toxiproxy used as a library, as
// internal/ensemble cuts the links between ZooKeeper members): the
// holder's client dials a proxy in front of each server, the other
// clients dial the servers. Cut, a proxy keeps every connection open on
// both sides and delivers nothing, not even the end of a connection the
// holder closes; new connections are accepted and go nowhere. Healed, it
// closes the connections that lived through the cut on both sides (a
// proxy cannot resume a stream it dropped bytes from) and new ones work.
//
// What a proxy cannot make: the server's kernel talks TCP to the proxy's,
// which answers, so TCP keep-alive probes are answered during the cut and
// never end the server's side of the connection; across a real cut they
// would, after the system's keep-alive time (two hours and more on Linux
// by default).

// cutToxic drops every byte in one direction while its cut lasts.
// Unlike toxiproxy's timeout toxic with no timeout, which the ensemble
// uses, it also keeps to itself the end of a stream (a close by the side
// it carries from), which would otherwise reach the other side: a cut
// holder that gives up on its connection and closes it must not end its
// session on the server. When the cut heals it ends the connections that
// lived through it (closing its stream, then reading what is left of its
// input until that closes too, so that nothing upstream of it in the
// chain waits on it), and passes new connections' bytes on.
//
// It is not removed to heal: toxiproxy's removal of a toxic that closes
// its stream leaves the toxic before it sending into a channel nobody
// reads, should more bytes come, and that goroutine would never end.
type cutToxic struct {
	Cut int64 `json:"cut"` // the key of its cut in cuts
}

const cutToxicType = "zklocks-rivals-cut"

func init() { toxics.Register(cutToxicType, new(cutToxic)) }

// cuts holds each cut's healed channel by key: a toxic gets only its
// JSON attributes from toxiproxy.
var cuts = struct {
	sync.Mutex
	next   int64
	healed map[int64]chan struct{}
}{healed: map[int64]chan struct{}{}}

func (c *cutToxic) Pipe(stub *toxics.ToxicStub) {
	cuts.Lock()
	healed := cuts.healed[c.Cut]
	cuts.Unlock()
	select {
	case <-healed:
		new(toxics.NoopToxic).Pipe(stub)
		return
	default:
	}
	in := stub.Input
	for {
		select {
		case <-stub.Interrupt:
			return
		case <-healed:
			stub.Close()
			for in != nil {
				if c := <-in; c == nil {
					in = nil
				}
			}
			return
		case c := <-in:
			if c == nil {
				in = nil // the sender closed: say nothing until the heal
			}
		}
	}
}

// cutLinks are the proxies between one holder's client and its servers.
// They can be cut off once, and healed.
type cutLinks struct {
	proxies []*toxiproxy.Proxy
	cut     int64         // the key in cuts, set by cutOff
	healed  chan struct{} // set by cutOff, closed by heal
}

// newCutLinks starts a proxy in front of each of upstreams (host:port);
// the test's cleanup heals and stops them.
func newCutLinks(t *testing.T, upstreams []string) *cutLinks {
	t.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	l := &cutLinks{}
	t.Cleanup(func() {
		l.heal()
		for _, p := range l.proxies {
			p.Stop()
		}
		cuts.Lock()
		delete(cuts.healed, l.cut)
		cuts.Unlock()
	})
	for i, up := range upstreams {
		p := toxiproxy.NewProxy(server, fmt.Sprintf("holder-%d", i), "127.0.0.1:0", up)
		if err := p.Start(); err != nil {
			t.Fatalf("proxy in front of %s: %v", up, err)
		}
		l.proxies = append(l.proxies, p)
	}
	return l
}

// addrs are the proxies' addresses, in the order of the upstreams.
func (l *cutLinks) addrs() []string {
	var a []string
	for _, p := range l.proxies {
		a = append(a, p.Listen)
	}
	return a
}

// cutOff makes every link silent, both ways.
func (l *cutLinks) cutOff(t *testing.T) {
	t.Helper()
	if l.healed != nil {
		t.Fatal("cutLinks: cut off twice")
	}
	cuts.Lock()
	cuts.next++
	key := cuts.next
	l.cut, l.healed = key, make(chan struct{})
	cuts.healed[key] = l.healed
	cuts.Unlock()
	for _, p := range l.proxies {
		for _, stream := range []string{"upstream", "downstream"} {
			spec := fmt.Sprintf(`{"name":"cut-%s","type":%q,"stream":%q,"attributes":{"cut":%d}}`,
				stream, cutToxicType, stream, key)
			if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
				t.Fatalf("cut %s: %v", p.Name, err)
			}
		}
	}
}

// heal ends the cut: the connections that lived through it are closed
// on both sides, new ones carry bytes again.
func (l *cutLinks) heal() {
	if l.healed == nil {
		return
	}
	select {
	case <-l.healed:
	default:
		close(l.healed)
	}
}

// cutOffTarget starts the shared servers of system if need be, and
// proxies in front of them: it returns what a holder's client dials to
// reach them through the proxies, in the form targetOf gives.
func cutOffTarget(t *testing.T, system System) (string, *cutLinks) {
	t.Helper()
	switch system {
	case SystemEtcd, SystemRedis, SystemRedlock:
		l := newCutLinks(t, strings.Split(targetOf(t, system), ","))
		return strings.Join(l.addrs(), ","), l
	case SystemPGSession, SystemPGXact:
		l := newCutLinks(t, []string{"127.0.0.1:" + strconv.Itoa(postgresServer(t).Port)})
		host, port, err := net.SplitHostPort(l.addrs()[0])
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			t.Fatal(err)
		}
		return pgDSN(host, p), l
	}
	t.Fatalf("no system %q", system)
	return "", nil
}
