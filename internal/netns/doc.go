// Package netns runs a ZooKeeper ensemble and its clients in Linux network
// namespaces, so that the fault tests can cut links with the kernel
// instead of a relay in user space.
//
// # The network
//
// New makes a hub namespace holding a bridge; Add makes a node: a
// namespace of its own, joined to the bridge by a veth pair (the veth is
// created in the hub with its peer already inside the node's namespace,
// so no interface ever appears in this machine's own namespace). Each
// node gets one address of 198.18.0.0/24, inside 198.18.0.0/15, the range
// RFC 2544 reserves for benchmarking, which no private network or public
// host uses. No namespace has any other route (IPv6 is off in each), and
// Net.CheckIsolated asserts it; a test does so on every run.
//
// StartEnsemble makes a node per member (m1, m2, ...) and an admin node,
// and starts the members through internal/ensemble's seam: Config.Hosts
// (each member binds its client, quorum and election ports on its own
// address), Config.Wrap (the JVM runs behind `ip netns exec`, which
// execs it: same pid, same process group, and the parent-death signal
// internal/ensemble sets still applies) and Config.Dial (the ensemble
// polls srvr from the admin node).
//
// # Clients: sockets made in a namespace, not child processes
//
// A client of the tests (a holder, a waiter, an admin session) gets a
// node, and go-zookeeper dials through the node's DialTimeout. The socket
// is created on an OS thread that has entered the node's namespace
// (setns), and a socket belongs to the namespace it was created in for
// its whole life: its address, routes, nftables rules and TCP timers
// (retransmission, keep-alive) are that namespace's, whichever thread
// reads or writes it later. The thread goes back to this process's
// namespace before the goroutine unlocks it; if it cannot, the goroutine
// never unlocks it and the runtime ends the thread (the main thread,
// which the runtime never ends, is parked instead), so no other
// goroutine ever runs in a node's namespace.
//
// The alternative, a holder as a child process run with `ip netns exec`,
// was not chosen: the fault tests record every hold on one tape, with
// one monotonic clock, and check the history of all holders together
// (internal/faulttest's harness, with its Wire that reads the holder's
// frames). In-process clients keep all of that as it is; only the
// dialer changes. What the choice gives up: the client's process is not
// in the namespace, so a fault of the client process itself (SIGSTOP,
// SIGKILL) is still the job of the child-process tests.
//
// # Cuts
//
// Cut, Partition and Detach make faults the kernel carries out:
//
//   - silent: an nftables rule in the input hook of each receiving
//     namespace drops the packets; nothing is answered, nothing closed,
//     and the senders retransmit until a timeout of their own;
//   - loud (Cut.Loud): the rule rejects TCP segments with a reset, so a
//     sender learns at once (ECONNRESET, ECONNREFUSED);
//   - one way (Cut.OneWay): only one side's packets are dropped;
//   - between members (Ensemble.PartitionSilently, Partition): quorum and
//     election ports alike, since a rule matches addresses, not ports;
//     no advertiser is needed to stop dial-backs, as with relays;
//   - a client from its member (a Cut between their nodes), while the
//     members still see each other;
//   - Detach: a node's veth off the bridge, the cable pulled out.
//
// Heal removes every rule and reattaches every veth. The kernel here has
// no netem and no tc classifiers, so delay and partial loss stay with
// toxiproxy (ensemble.SlowLink, ensemble.NewSlowProxy) and frame-level
// faults with zktest.Wire.
//
// # Leaks
//
// Every namespace's name begins with Prefix, then the pid of the process
// that made it: zkln-<pid>-<tag>-<node>. Close removes a Net's
// namespaces (killing whatever still runs in them); their veths and the
// bridge go with them. A test binary killed before its cleanups leaves
// its namespaces behind, but not its JVMs (the parent-death signal kills
// them); the next run's TestMain calls Sweep, which removes the
// namespaces of every pid that no longer runs, and leaves those of live
// test binaries alone. TestNothingOutlivesAKilledRun kills a test binary
// with SIGKILL and checks both.
//
// Where namespaces cannot be made (not root, no ip or no nft), Available
// says why and the tests skip with that message; scripts/install-netns.sh
// (run by make test) installs ip and nft where it can.
package netns
