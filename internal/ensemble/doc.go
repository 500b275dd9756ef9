// Package ensemble runs a real ZooKeeper ensemble on the loopback interface
// for tests, the benchmark and the zklocks command line.
//
// Start launches Size QuorumPeerMain JVMs from an installed ZooKeeper (the
// Debian/Ubuntu package's jars in /usr/share/java, or ZOOKEEPER_HOME pointing
// at an Apache binary tarball or a Homebrew install), each with its own
// temporary data directory, log file and free loopback ports, and returns
// once a leader is elected and every member serves clients. Several test
// binaries can therefore run their own ensembles side by side.
//
// Fault tests use Stop (SIGTERM), Kill (SIGKILL), Restart and Leader; the
// benchmark reads the servers' own counters with Mntr. Close kills every
// JVM the Ensemble started. On Linux each JVM also gets the kernel's
// parent-death signal, so no ZooKeeper outlives the process that started
// it, even when a test panics or the test binary is killed.
//
// Config.Hosts, Config.Wrap and Config.Dial are the seam of ensembles
// whose members live in networks of their own: internal/netns gives each
// member a network namespace (Wrap runs the JVM behind ip netns exec, Hosts
// are the members' addresses there, Dial reaches them from this process).
//
// When no installation can be found, Start fails with an error that wraps
// ErrNoZooKeeper and says how to get one.
//
// The package builds on Unix systems (Linux, macOS with Homebrew's
// ZooKeeper); the parent-death signal is Linux-only.
package ensemble
