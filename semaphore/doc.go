// Package semaphore admits N holders at once, herd-free: "at most N
// workers run this job", with the queue of the sequential lock. Its peer
// is Curator's InterProcessSemaphoreV2. docs/09-semaphore.md teaches it
// and argues each step.
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
// # Guarantees
//
//   - At most N hold at once, and N do when N want to: a listing from a
//     lagging server can only make a contender wait longer.
//   - A release costs a few watch events, however many wait.
//   - Tokens grow with every admission; with one permit it is a mutex.
//
// # Failure modes
//
//   - Every contender of one path must use the same N; the servers do not
//     check it, and a contender with a larger N holds where others wait.
//   - A resource fenced by "refuse tokens older than the newest" would
//     refuse the other N-1 holders: fence per permit, or keep the live set.
//   - An announcement lost with the connection is written later, while
//     our node lives; if the node goes first, its delete wakes the waiter
//     behind instead.
//   - Admissions come one at a time: the next waiter follows only once
//     the one let in before it has announced.
//   - Loss, cut-off and Done behave as in package sequential.
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
//	lockq.Queue.AwaitQueueChange  internal/lockq/watchall.go  step 4: the first waiter's child watch
//	lockq.Queue.AwaitGone         internal/lockq/wait.go      step 5, with the hook seesPromoted
//	lockq.Queue.Mark              internal/lockq/watchall.go  step 3 after a wait: "held" into our node
//
// and Unlock: Semaphore.Unlock, lockq.Slot.Unlock, lockq.Queue.Release
// (leave.go: our node deleted by name, or later when it can not be sent
// now), whose delete fires the first waiter's child watch.
package semaphore
