package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Prefix begins the name of every namespace this package makes. A run's
// names go on with the pid of the process that made them and a random
// tag: zkln-<pid>-<tag>-<node>. Sweep reads the pid back to tell a live
// run's namespaces from a dead one's.
const Prefix = "zkln-"

// Subnet is the only network a namespace has a route to: a part of
// 198.18.0.0/15, the range reserved for benchmarking network devices
// (RFC 2544), which no private network or public host uses.
var Subnet = netip.MustParsePrefix("198.18.0.0/24")

// Reserved is the whole benchmarking range; CheckIsolated fails on any
// route outside it (loopback aside).
var Reserved = netip.MustParsePrefix("198.18.0.0/15")

const nsDir = "/run/netns"

// ErrUnavailable is wrapped by the errors of Available, New and
// StartEnsemble when this machine can not make namespaces here: not root,
// or ip or nft missing. Tests skip on it with its message.
var ErrUnavailable = errors.New("netns: network namespaces can not be made here")

// Available returns nil when namespaces, veth pairs, bridges and nftables
// rules can be made: the process runs as root and finds ip and nft.
// Otherwise its error wraps ErrUnavailable and says what is missing.
func Available() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (ip netns add needs CAP_SYS_ADMIN; run the tests as root)")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (scripts/install-netns.sh installs it)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: needs %s", ErrUnavailable, strings.Join(missing, ", "))
	}
	return nil
}

// Net is one run's network: a hub namespace holding a bridge, and nodes,
// each a namespace of its own joined to the bridge by a veth pair. Its
// methods are safe for concurrent use.
type Net struct {
	run string // Prefix + pid + tag
	hub string // the hub namespace

	mu       sync.Mutex
	nodes    []*Node
	cuts     []Cut
	rules    map[*Node]string // the ruleset last loaded into each node
	detached map[*Node]bool
	closed   bool
}

// Node is one namespace on the bridge, with one address.
type Node struct {
	Name string     // the role given to Add: m1, admin, holder...
	NS   string     // the namespace's name (ip netns)
	IP   netip.Addr // its address on the bridge
	port string     // its veth's end in the hub namespace
	net  *Net
}

func (nd *Node) String() string { return nd.Name + "(" + nd.IP.String() + ")" }

// New makes the hub namespace and its bridge. Close removes everything
// the Net made; Sweep removes what a killed process left.
func New(ctx context.Context) (*Net, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	n := &Net{
		run:      fmt.Sprintf("%s%d-%04x", Prefix, os.Getpid(), rand.IntN(1<<16)),
		rules:    map[*Node]string{},
		detached: map[*Node]bool{},
	}
	n.hub = n.run + "-hub"
	err := n.makeNS(ctx, n.hub)
	if err == nil {
		err = runAll(ctx, [][]string{
			{"ip", "-n", n.hub, "link", "add", "br0", "type", "bridge"},
			{"ip", "-n", n.hub, "link", "set", "br0", "up"},
		})
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// Run returns the run's name prefix: every namespace of the Net begins
// with it.
func (n *Net) Run() string { return n.run }

// makeNS adds a namespace with loopback up and IPv6 off (so that no
// link-local or other IPv6 route appears).
func (n *Net) makeNS(ctx context.Context, ns string) error {
	if err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return err
	}
	return n.setUp(ctx, ns)
}

func (n *Net) setUp(ctx context.Context, ns string) error {
	return runAll(ctx, [][]string{
		{"ip", "netns", "exec", ns, "sysctl", "-q", "-w",
			"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
	})
}

// Add makes a node: a namespace named after role, a veth pair from it to
// the bridge, and the next free address of Subnet.
func (n *Net) Add(ctx context.Context, role string) (*Node, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("netns: Add after Close")
	}
	i := len(n.nodes)
	ip := Subnet.Addr()
	for range i + 1 {
		ip = ip.Next()
	}
	if !Subnet.Contains(ip.Next()) { // keep the broadcast address free
		return nil, fmt.Errorf("netns: no address left in %v", Subnet)
	}
	for _, o := range n.nodes {
		if o.Name == role {
			return nil, fmt.Errorf("netns: the Net has a node %s already", role)
		}
	}
	nd := &Node{Name: role, NS: n.run + "-" + role, IP: ip, port: "p" + strconv.Itoa(i), net: n}
	if err := run(ctx, "ip", "netns", "add", nd.NS); err != nil {
		return nil, err
	}
	if err := n.setUp(ctx, nd.NS); err != nil {
		_ = removeNS(nd.NS)
		return nil, err
	}
	n.nodes = append(n.nodes, nd) // from here on Close removes it
	cidr := fmt.Sprintf("%s/%d", ip, Subnet.Bits())
	err := runAll(ctx, [][]string{
		{"ip", "-n", n.hub, "link", "add", nd.port, "type", "veth", "peer", "name", "eth0", "netns", nd.NS},
		{"ip", "-n", n.hub, "link", "set", nd.port, "master", "br0"},
		{"ip", "-n", n.hub, "link", "set", nd.port, "up"},
		{"ip", "-n", nd.NS, "addr", "add", cidr, "dev", "eth0"},
		{"ip", "-n", nd.NS, "link", "set", "eth0", "up"},
	})
	if err != nil {
		return nil, err
	}
	return nd, nil
}

// Nodes returns the nodes in the order Add made them.
func (n *Net) Nodes() []*Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Node(nil), n.nodes...)
}

// Close kills whatever still runs in the Net's namespaces and removes
// them (their veth pairs and the bridge go with them). It is safe to call
// more than once.
func (n *Net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	var errs []error
	for _, ns := range namespaces(n.run + "-") {
		errs = append(errs, removeNS(ns))
	}
	return errors.Join(errs...)
}

// removeNS kills the processes in ns and deletes it.
func removeNS(ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := output(ctx, "ip", "netns", "pids", ns); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if err := run(ctx, "ip", "netns", "del", ns); err != nil {
		if _, statErr := os.Stat(nsDir + "/" + ns); os.IsNotExist(statErr) {
			return nil
		}
		return err
	}
	return nil
}

// namespaces lists the named namespaces that begin with prefix.
func namespaces(prefix string) []string {
	ents, _ := os.ReadDir(nsDir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// Leftovers lists the namespaces of this package (those of prefix, when
// given; Prefix otherwise) and the processes that run in them.
func Leftovers(prefix string) (nss []string, pids []int) {
	if prefix == "" {
		prefix = Prefix
	}
	nss = namespaces(prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ns := range nss {
		out, _ := output(ctx, "ip", "netns", "pids", ns)
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return nss, pids
}

// Sweep removes the namespaces (and kills the processes in them) of runs
// whose process is gone: a test binary killed before its cleanup. The
// namespaces of live processes, this one's and other test binaries'
// running side by side, are left alone. It returns the names removed.
func Sweep() ([]string, error) {
	if Available() != nil {
		return nil, nil
	}
	var removed []string
	var errs []error
	for _, ns := range namespaces(Prefix) {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(ns, Prefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err == nil && pid != os.Getpid() && running(pid) {
			continue
		}
		if err == nil && pid == os.Getpid() {
			continue
		}
		if err := removeNS(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ns)
	}
	return removed, errors.Join(errs...)
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func run(ctx context.Context, name string, args ...string) error {
	_, err := output(ctx, name, args...)
	return err
}

func runAll(ctx context.Context, cmds [][]string) error {
	for _, c := range cmds {
		if err := run(ctx, c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// output runs a command and returns its stdout; its error holds stderr.
func output(ctx context.Context, name string, args ...string) (string, error) {
	return outputIn(ctx, nil, name, args...)
}

func outputIn(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("netns: %s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
