// Package semaphore admits N holders at once, herd-free: "at most N
// workers run this job", with the queue of the sequential lock.
//
// It is a rung beyond the study notes. Its peer is Curator's
// InterProcessSemaphoreV2, which keeps the cost of a release small
// another way (5.4, read in its bytecode): its waiters first queue on an
// inner InterProcessMutex, and only the one at the head of that queue
// watches the leases, so every acquisition pays the inner lock's create
// and delete besides its lease's. Here the queue of leases is the only
// queue.
//
// # The recipe
//
// Every contender joins one queue of ephemeral-sequential nodes, as in
// package sequential. The first N nodes hold; the others wait:
//
//  1. Join: create our node, _c_<guid>-lock-<seq>.
//  2. List the queue.
//  3. Fewer than N nodes ahead of ours: we hold a permit. A contender
//     that had to wait writes "held" into its own node (the announcement).
//  4. Exactly N ahead: we are the first waiter, and the release of any
//     holder lets us in. Watch the queue itself (a child watch on the
//     path), and list again when it fires.
//  5. More than N ahead: watch only our predecessor (a data watch), and
//     list again when it goes or announces that it was let in.
//
// # Why at most N hold
//
// A node holds only after a listing showed fewer than N nodes ahead of
// it. Nodes created later get larger sequence numbers and line up behind
// it, so the nodes ahead of it can only go, never come: once fewer than
// N, always fewer than N while it lives. At any moment, then, every
// holder has fewer than N nodes ahead of it, and only the first N nodes of
// a queue have that. A listing from a lagging server can show nodes that
// are already gone, never miss one ahead of ours (those were created
// before our node, which our server has applied), so it only makes a
// contender wait longer. TestNeverMoreThanNHolders checks the bound, and
// that N do hold at once.
//
// # Why a release wakes so few
//
// Only the first waiter can be let in by a release, and by the release of
// any of the N holders, so it alone watches the whole queue. When it is
// let in, the waiter behind it has become the first waiter, but no node
// it watches has gone; hence the announcement, one write that fires that
// waiter's data watch. A release therefore costs a few watch events
// whatever the number of waiters: the first waiter's, the announcement's
// at the waiter behind, and the announcer's own watch on its node; and
// the first waiter's child watch fires once per join as well.
// TestWatchEventsPerAcquisitionDoNotGrowWithWaiters measures it with 3 and
// 12 waiters. One event per release is not reachable this way: the new
// first waiter must be told by some write, and the release's own delete
// has already gone to the waiter it let in.
//
// # Tokens and fencing with N holders
//
// Token is the czxid of the holder's node, as for the mutex, and tokens
// of successive admissions grow. But N holders are legitimately at work
// at once, so "refuse a token older than the newest seen" would refuse
// the other N-1: a resource fenced this way must be one per permit, or
// track the set of live tokens. What a token still proves is admission
// order: contenders are let in in queue order, so tokens grow with every
// admission.
//
// # Failure modes
//
//   - Every contender of one path must use the same N; the servers do not
//     check it, and a contender with a larger N holds where the others
//     wait.
//   - A lost announcement (connection down right after the promotion) is
//     written later, while our node lives; if the node goes first, its
//     delete wakes the waiter behind instead.
//   - Loss, cut-off and Done behave as in package sequential (Done closes
//     late, never early).
//
// # Through the code
//
// A Lock call goes:
//
//	Semaphore.Lock                semaphore/semaphore.go     prefixes errors
//	lockq.Slot.Take               internal/lockq/slot.go     idle -> acquiring -> held, the log
//	Semaphore.lock                semaphore/recipe.go        the steps above
//	lockq.Queue.Join              internal/lockq/join.go     step 1, as for the mutex
//	lockq.Queue.Line              internal/lockq/line.go     step 2; Ahead decides 3, 4 or 5
//	lockq.Queue.AwaitQueueChange  internal/lockq/permits.go  step 4: the first waiter's child watch
//	lockq.Queue.AwaitGone         internal/lockq/wait.go     step 5, with the hook lockq.SeesPromoted
//	lockq.Queue.Announce          internal/lockq/permits.go  step 3 after a wait: "held" into our node
//
// and Unlock: Semaphore.Unlock, lockq.Slot.Unlock, lockq.Queue.Release
// (leave.go: our node deleted by name, or later when it can not be sent
// now), whose delete fires the first waiter's child watch.
//
// New(s, path, permits, opts...) takes the options every lock shares
// (zklocks.WithACL, zklocks.WithLogger) and fails with
// zklocks.ErrBadOption when permits is less than 1.
package semaphore
