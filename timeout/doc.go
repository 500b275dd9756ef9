// Package timeout is the sequential lock with two time limits that are
// easy to confuse: an acquire timeout, which protects the waiter, and a
// hold lease, which protects everyone else from a stuck holder.
// docs/04-timeout.md teaches both and proves the lease safe.
//
// # The recipe
//
//  1. Wait as package sequential does, bounded by ctx, or by
//     LockTimeout(ctx, d), which fails with ErrWaitTimeout after d. A
//     waiter that gives up leaves no node behind.
//  2. With WithLease(d), each node states its lease ("lease=<ms>ms"). The
//     holder writes "lease=<ms>ms held" as Lock returns (the record) and
//     again every d/3, each a versioned write of its own node.
//  3. While waiting, the first waiter that speaks leases judges the head:
//     it writes its own node (a probe), reads the head, and finds the
//     lease expired when head.Mtime + lease <= probe.Mtime, two times
//     stamped by ZooKeeper. Its own clock only schedules the look.
//  4. It evicts an expired head with a delete at the version it just read.
//  5. A holder with no write landed for 95% of its lease (or the lease
//     less 200ms, if sooner) gives the hold up itself: ErrLeaseExpired.
//
// # Guarantees
//
//   - Those of package sequential. A holder that renews is never evicted,
//     however skewed the clients' clocks; one cut off gives up first.
//   - One eviction per expired hold: the evicted holder's Done closes
//     with ErrEvicted, which is also zklocks.ErrLockLost.
//   - Nodes that state no lease (sequential's, Curator's, kazoo's) are
//     never evicted; a Mutex without WithLease still judges the head.
//
// # Failure modes
//
//   - Eviction turns a paused holder into a stale one: fence with Token.
//   - A step of the leader's clock within its epoch moves every lease.
//   - A lease shows the process and its connection alive, not progress.
//   - A judge stalled with its session alive delays eviction until it expires.
//   - Each hold's lease costs a write per d/3, growing with locks held.
//
// # Through the code
//
// The package is the sequential recipe (recipe.go, a marked copy of
// sequential/recipe.go on the same queue client, internal/lockq) with the
// lease on both sides of the wait. A Lock or LockTimeout call goes:
//
//	Mutex.Lock, LockTimeout   timeout/mutex.go        the wait bound, prefixes errors
//	Mutex.acquire             timeout/mutex.go        a judge; keeps the new hold's renewal
//	lockq.Slot.Take           internal/lockq/slot.go  idle -> acquiring -> held, the log
//	Mutex.lock                timeout/recipe.go       sequential's steps, two marked
//	lockq.Queue               internal/lockq          join, line, await the predecessor
//	judge.hook, judge.decide  timeout/judge.go        while waiting: judge the head's lease, evict
//	Mutex.stamp               timeout/renewal.go      once first: the lease begins
//	renewal.run               timeout/renewal.go      the "held" record, a renewal every lease/3
//	ownNode.write             timeout/record.go       each write of our node, versioned
//
// and Unlock: Mutex.Unlock, lockq.Slot.Unlock (the node deleted and its
// monitor released, which stops the renewals), then, when that released
// a hold, its renewal's last write is waited for while ctx allows. A
// lease that runs out ends the hold through the same monitor
// (hold.Monitor.Lose), so Done and Err are the Slot's.
package timeout
