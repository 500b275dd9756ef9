// Package bench is the side-by-side harness: it runs every lock of the
// repository, and the peers (go-zookeeper's own Lock in this process,
// Curator's and kazoo's locks each in a driver process of bench/peers), on
// the same ensemble, with the same contenders, and measures what each step
// of the progression buys. docs/bench-setup.md states the configuration
// of the runs the docs quote, what each figure counts, and how to run it.
//
// A run (Run, Config) gives N contenders one session each, all contending
// for one lock path, for a number of acquisitions or a duration, with an
// optional critical section. It measures:
//
//   - throughput, and the acquire and handoff latencies, p50/p99/max from
//     an HDR histogram; a handoff runs from just before one holder calls
//     Unlock to just after the next holder's Lock returns, in one process
//     on one monotonic clock;
//   - the handoff split at two moments seen on the wire (the releasing
//     delete leaving the client, through a tapped dialer; the wake-up
//     event reaching the next holder's session, through go-zookeeper's
//     event callback), so that a read after waking shows;
//   - what the servers counted (mntr, read from every member before and
//     after the run, with the sessions opened before and closed after):
//     watchers fired, quorum writes, packets;
//   - watch events that reached the contenders, and the lock's own Stats,
//     telling a release's events on its own node ("self") from wake-ups.
//
// Every run also records its history of holds and fails with
// ErrMutualExclusion if two holds overlap or a token does not grow, and
// fails if the lock leaves a node behind.
//
// MeasureFloors gives every latency a yardstick on the same ensemble: a
// create and delete on one session, and a delete's notification to a
// data watch set WaitGap before it. MeasurePrice splits sequential's
// uncontended gap to go-zookeeper's Lock into what the fencing token's
// read, Done's watch and a goroutine per request cost on bare
// connections. zklocks bench runs rounds that the variants take in turns,
// with floors of their own, and reports medians with distribution-free
// 95% intervals and paired ratios (stats.go says how and why).
//
// Curator and kazoo run as Variant.Driver: a driver prints one line per
// hold, from which the harness takes throughput and latencies; the
// servers' counters are the same for every client, and what only the Go
// client's wire shows is not measured for them. The same harness runs as
// Go benchmarks (BenchmarkLock, the in-process variants only) and from
// zklocks bench, which writes docs/results.
package bench
