// Package bench is the side-by-side harness: it runs every lock of the
// repository, and the peers (go-zookeeper's own Lock in this process,
// Curator's InterProcessMutex and kazoo's Lock each in a driver process
// of bench/peers), on the same ensemble, with the same contenders, and
// measures what each step of the progression buys.
//
// A run (Run, Config) gives N contenders one session each, all contending
// for one lock path, for a number of acquisitions or a duration, with an
// optional critical section. It measures:
//
//   - throughput (acquisitions per second);
//   - acquire latency (Lock called to Lock returned) and handoff latency
//     (just before one holder calls Unlock to just after the next holder's
//     Lock returns; one process, one monotonic clock), p50/p99/max from an
//     HDR histogram;
//   - the handoff split at two moments seen on the wire (a tapped dialer
//     notes when the releasing session's delete leaves the client; the
//     event callback, when the wake-up event reaches the next holder's
//     session): the releasing lock's own work, the servers' part, and the
//     next holder's work after the event (where a read after waking shows);
//   - what the servers counted, from mntr, read from every member before
//     and after the run: watchers fired (the zk_sum_node_*_watch_count
//     summaries, summed over members and event types), quorum writes (the
//     leader's zk_proposal_count), packets received and sent;
//   - watch events that reached the contenders' sessions, seen on the wire
//     through go-zookeeper's event callback, and the lock's own Stats()
//     where it keeps them.
//
// Sessions are opened, and the lock path created, before the first mntr
// reading, and closed after the second, so that the session creates and
// closes (quorum writes too) stay out of the counts.
//
// Two floors, measured on the same ensemble (MeasureFloors), give every
// latency a yardstick that cancels the machine's speed: one session
// creating and deleting a node (two writes, the least an acquire plus a
// release can cost), and the time from a delete to the NodeDeleted event
// on another session's data watch, set WaitGap before the delete as a
// waiting contender's is (the least a handoff can cost). zklocks bench
// measures them again at the start of every round, and pairs each round's
// handoff with its own round's floor: on a shared machine one floor per
// number of contenders put the same code anywhere from 0.98x to 1.42x of
// it.
//
// MeasurePrice splits sequential's uncontended gap to go-zookeeper's Lock
// into its parts, on bare connections with no lock code: the read of our
// own node that gives the fencing token, the watch it leaves for Done,
// and the goroutine per request that gives go-zookeeper's blocking calls
// a context. What sequential costs beyond those is its own client code.
//
// The release's own watch events are told apart from wake-ups: the zklocks
// variants keep a data watch on their own node, which their own delete (or
// setData) fires; events about a node the contender held count as "self",
// not as contenders woken.
//
// Every run also records its history of holds (enter, exit, token) and
// fails with ErrMutualExclusion if two holds overlap or a token does not
// grow, and fails if the lock leaves a node behind.
//
// zklocks bench splits each variant's run at one N into rounds that the
// variants take in turns, keeps each round's headline figures
// (RoundFigures), and reports each as the median of the rounds with a
// distribution-free 95% interval, and every comparison as the median of
// the ratios of paired rounds with its interval (stats.go says how and
// why).
//
// Curator and kazoo run as Variant.Driver: a driver prints one line per
// hold (acquire called, acquire returned, release about to be called),
// from which the harness takes throughput and the acquire and handoff
// latencies; the servers' counters, read around each round while the
// driver's sessions are open, are the same for every client. What only
// the Go client's wire shows (watch events received, the handoff split,
// the lock's own request count) is not measured for them.
//
// The same harness runs as Go benchmarks (BenchmarkLock, for benchstat;
// the in-process variants only) and from the command line (zklocks
// bench), which writes docs/results.
package bench
