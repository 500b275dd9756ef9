// Package election is leader election on ZooKeeper, taught in
// docs/10-election.md: the sequential lock held for a term instead of a
// critical section, with the candidate's value in its node; the API
// follows etcd's concurrency.Election.
//
// # The recipe
//
// Campaign runs the lock's recipe (recipe.go, campaign): our node,
// _c_<guid>-latch-<seq> as Curator's LeaderLatch names it, holds the
// value; the first in line leads, each other candidate watching the one
// just ahead. A term ends when the leader's node goes (Resign, the
// session's end, a delete). Leader and Observe read the value at the
// head; Observe watches its data only, so joins wake no observer.
//
//	e, _ := election.New(s, "/services/scheduler")
//	e.Campaign(ctx, []byte("host-a:8080")) // waits until this candidate leads
//	<-e.Done()                              // the term ended: stop acting as leader
//	for l := range f.Observe(ctx) {         // anyone, on any Election of the path
//		fmt.Printf("%s leads, term %d\n", l.Value, l.Term)
//	}
//
// # Guarantees
//
//   - At most one term at a time whose node exists (TestOneLeaderAtATime).
//   - Term (the leader's node's czxid) grows from term to term, the same
//     for every candidate and observer; Done closes when the term ends.
//   - A failed or cancelled Campaign leaves no node behind.
//
// # Failure modes
//
//   - A leader paused or cut off learns late that its term ended: fence
//     with Term, or write with zklocks.SetIfHeld.
//   - Observe reports the newest leader, and can skip a term.
//   - kazoo's Election can not share a path: it counts only its own
//     names and leads beside ours (kazoo's Lock given
//     extra_lock_patterns=["-latch-"] can; Curator's LeaderLatch can).
//   - Failover takes a session timeout, unless the leader resigns or
//     closes its session before it exits.
//
// # Through the code
//
// A Campaign call (and Lock, Campaign with no value) goes:
//
//	Election.Campaign      election/election.go    prefixes errors
//	Election.run           election/election.go    the way in of Campaign, Lock and TryLock
//	lockq.Slot.Take        internal/lockq/slot.go  idle -> campaigning -> leading, the log
//	Election.campaign      election/recipe.go      steps 0-5, the lock's with the value as data
//	lockq.Queue.Join       internal/lockq/join.go  step 1: our node, _c_<guid>-latch-<seq>
//	lockq.Queue.Line       internal/lockq/line.go  steps 2-3: first in line leads
//	lockq.Queue.AwaitGone  internal/lockq/wait.go  steps 4-5: the watch on the candidate ahead
//
// and Resign (or Unlock): Election.Resign, lockq.Slot.Unlock,
// lockq.Queue.Release (leave.go: our node deleted by name, or later when
// it can not be sent now), which wakes the next candidate and every
// observer. An Observe call goes:
//
//	Election.Observe       election/election.go    reports each term once, the newest
//	Election.observe       election/election.go    again when the watch fires, backoff
//	Election.lookAtHead    election/recipe.go      the head's value and its watch
package election
