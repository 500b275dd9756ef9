// Package election is leader election on ZooKeeper, the recipe its
// documentation gives right after the lock: candidates queue as
// ephemeral-sequential nodes, the first one leads, and each of the others
// watches only the candidate just ahead of it. It is the sequential lock
// (docs/02-sequential.md) held for a term instead of a critical section; the API
// follows etcd's concurrency.Election.
//
// # Recipe
//
//	e, _ := election.New(s, "/services/scheduler")
//	e.Campaign(ctx, []byte("host-a:8080")) // waits until this candidate leads
//	<-e.Done()                              // the term ended: stop acting as leader
//	e.Resign(ctx)                           // or give the term up
//
//	for l := range f.Observe(ctx) {         // anyone, on any Election of the path:
//		fmt.Printf("%s leads, term %d\n", l.Value, l.Term) // who leads, term by term
//	}
//
// Campaign is the lock's recipe (recipe.go, campaign) with the candidate's
// value as its node's data. Leader and Observe read the value from the
// head of the queue. Observe watches only the head's node (a data watch),
// so a candidate joining or giving up behind it wakes no observer, and
// the end of a term wakes each observer once: that broadcast is the news
// every follower needs, not a herd (the candidates still wake one at a
// time).
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
//
// # Guarantees
//
//   - At most one term at a time whose node exists: terms are the queue's
//     holds, and TestOneLeaderAtATime checks the recorded history.
//   - Term (the czxid of the leader's node) grows from term to term, and
//     every candidate and observer sees the same Term for a term.
//   - Done closes when the term ends: Resign, the node deleted, the
//     session expired, or the client cut off from the leader so long that
//     the leader may soon expire its session (internal/hold), as a lock's
//     hold ends.
//   - Nothing is left behind: a failed or cancelled Campaign deletes its
//     node, or the background clean-up does once the ensemble is back.
//
// # Failure modes
//
//   - Two processes can both act as leader for a while: one whose term
//     ended (paused, cut off) learns it late, through Done. Fence what the
//     leader writes with Term (a store that refuses older terms), or keep
//     the state in ZooKeeper and write it with zklocks.SetIfHeld, which
//     the servers refuse once the leader's node is gone.
//   - Observe can skip a term: it reports the newest leader, and a reader
//     slower than the terms sees only the last of them.
//   - Curator's LeaderLatch orders candidates by what follows "latch-" in
//     each node's name, so this package names its nodes as LeaderLatch
//     does (_c_<guid>-latch-<seq>); with the mutexes' "-lock-" names a
//     LeaderLatch sorted every one of ours behind its own, and 89 of 315
//     terms had two leaders. Named so, candidates of both on one path
//     take turns: TestMixedElections (internal/interop) checks the merged
//     history, about 350 terms with none overlapping. Curator's values are
//     its latch ids, not ours.
//   - kazoo's Election can not share a path with this package: it is
//     kazoo's Lock given no extra_lock_patterns, which counts only its own
//     <uuid>__lock__<seq> names, so it leads beside our leader while our
//     candidates wait behind its (TestKazooElection, internal/interop:
//     66 to 107 of about 300 mixed terms had two leaders). kazoo's Lock
//     with extra_lock_patterns=["-latch-"] takes turns with ours.
//   - Failover takes a session timeout. A leader whose process closes its
//     session hands over at once (2-8 ms); one killed, frozen or cut off
//     leads in the servers' eyes until they expire its session, 1.0 to
//     1.3 session timeouts after they last heard from it
//     (TestElectionFailover, internal/faulttest; chapter 10 has the
//     figures). The session timeout is the failover time.
//
// New(s, path, opts...) makes a candidate on s, a *zklocks.Session, and
// sends nothing. An Election is also a zklocks.Locker (Lock is Campaign
// with no value, Unlock is Resign), so the conformance and fault suites
// of the locks run against it.
package election
