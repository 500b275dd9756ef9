// Package interop runs the locks of this module on one lock path with the
// real clients other programs use, Curator's InterProcessMutex (Java) and
// kazoo's Lock (Python), and checks the merged history for double holders.
// The peers are the drivers in bench/peers, run as child processes; they
// come from Debian's libcurator-recipes-java and python3-kazoo, which
// scripts/install-peers.sh installs (make test does).
//
// Which pairs are safe, and what each client must be told, is the point:
// zklocks honours both clients' nodes, Curator honours ours, kazoo honours
// ours only with extra_lock_patterns=["-lock-"], and Curator and kazoo do
// not honour each other. TestMixedClients runs the safe pairs as tests and
// the unsafe ones as measurements, logging the overlaps they produce.
//
// The election likewise: Curator's LeaderLatch and our election take
// turns on one path (TestMixedElections); kazoo's Election, which is
// kazoo's Lock with no extra patterns, does not see our candidates while
// they see its, and TestKazooElection shows the two leaders that follows,
// beside kazoo's Lock told of "-latch-", which takes turns with ours.
package interop
