// Package reentrant is the sequential lock made re-entrant: an owner that
// holds the lock can lock it again, and unlocks it as often as it locked
// it. docs/03-reentrant.md teaches it and argues each choice below.
//
// # The recipe
//
//  1. An owner's first Lock takes the Mutex's turn (other owners of this
//     Mutex wait in the process) and runs the sequential recipe
//     (recipe.go, a marked copy), its node's data naming the Holder.
//  2. The holder's Lock and Unlock count levels, in memory or, in InNode
//     mode, in the node too (WithCountMode); at zero the node is deleted
//     and the turn passes on.
//
// Go has no goroutine identity, so the owner is explicit, in the context:
//
//	ctx = reentrant.WithOwner(ctx, "job-42")
//	m.Lock(ctx)   // first Lock: one sequential hold (one node), count 1
//	m.Lock(ctx)   // same owner: count 2, returns at once
//	m.Unlock(ctx) // count 1, still held
//	m.Unlock(ctx) // count 0: the node is deleted
//
// # Guarantees
//
//   - Those of package sequential; owners exclude each other whether they
//     share a Mutex, a session or nothing; re-entries keep node and Token.
//   - A lost hold is never re-entered: each Unlock still owed to it
//     returns zklocks.ErrLockLost, and the owner's next Lock queues anew.
//   - Unlock by the wrong owner changes nothing (ErrNotOwner,
//     zklocks.ErrNotLocked); a call with no owner fails with ErrNoOwner.
//
// # Failure modes
//
//   - An InMemory re-entry trusts Done, which closes late: fence with Token.
//   - A hold lost between an outer and an inner Lock: the inner Lock takes
//     a new hold. Check Done or Token if a section must be continuous.
//   - InNode: each re-entry and inner Unlock is a quorum write that wakes
//     the next waiter; one that fails within a session timeout ends it.
//   - Owners in one process are served in no guaranteed order.
//
// # Through the code
//
// The package is a layer over the sequential recipe, as Curator's
// InterProcessMutex is over LockInternals; the queue lives in
// internal/lockq, shared with the other queue-based locks. A Lock call
// goes:
//
//	Mutex.Lock            reentrant/mutex.go      prefixes errors
//	Mutex.enter           reentrant/recipe.go     the owner, re-entry, the turn, then the recipe
//	Mutex.reenter, move   reentrant/owners.go     one more level (count.go: InNode's write)
//	Mutex.awaitTurn       reentrant/owners.go     the other owners of this Mutex wait here
//	Mutex.take            reentrant/owners.go     a new node, in the owner's turn
//	lockq.Slot.Take       internal/lockq/slot.go  idle -> acquiring -> held, the log
//	Mutex.lock            reentrant/recipe.go     sequential's steps, marked copy
//	lockq.Queue           internal/lockq          join, line, await the predecessor
//
// and Unlock: Mutex.Unlock, Mutex.move (one level down; at zero
// lockq.Slot.Unlock deletes the node and the turn passes on). A lost hold
// is dropped first (Mutex.reapIfLost): its levels become Unlocks owed.
package reentrant
