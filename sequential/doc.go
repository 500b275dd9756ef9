// Package sequential is the classic ZooKeeper lock: every contender
// queues as an EPHEMERAL_SEQUENTIAL child of the lock path, the first in
// the queue holds the lock, and every other contender watches only the
// node just ahead of it: the recipe of ZooKeeper's recipes page and of
// Curator's InterProcessMutex, taught and argued in docs/02-sequential.md.
//
// # The recipe
//
//  1. Join: create <path>/_c_<guid>-lock- as EPHEMERAL_SEQUENTIAL (the
//     lock path is made on first use, a container node), and read our
//     node with a data watch: its czxid is the fencing token.
//  2. List the children and sort them by sequence number; children
//     without one are not contenders.
//  3. First in the list: the lock is ours.
//  4. Otherwise set a data watch (getData) on the node just ahead of ours
//     and wait. If that node is already gone, go back to 2.
//  5. When it is deleted: if it was the only node ahead of us at the last
//     listing, the lock is ours with no further request; otherwise go
//     back to 2.
//  6. Unlock deletes our node, which wakes the one contender behind us.
//
// # Guarantees
//
//   - No herd: a release wakes one waiter, whatever the queue's length.
//   - FIFO: contenders hold in the order their creates were committed.
//   - A create whose answer was lost leaves no orphan: the GUID in the
//     name finds our node, adopted only if our current session owns it.
//   - Nothing left behind: a failed Lock deletes its node before it
//     returns, or in the background once the ensemble is back.
//
// # Failure modes
//
//   - Done closes late, never early: a paused holder wakes up believing
//     it holds. Fence the resource with Token.
//   - A node deleted by hand ends the hold or the wait
//     (zklocks.ErrLockLost); a second Lock on the same Mutex fails with
//     zklocks.ErrAlreadyLocked (package reentrant re-enters).
//   - Other clients on the path must honour our nodes too: Curator does,
//     kazoo only with extra_lock_patterns, and neither once the path's
//     sequence counter has passed 2^31 and wrapped.
//
// # Through the code
//
// A Lock call goes:
//
//	Mutex.Lock             sequential/mutex.go      prefixes errors
//	lockq.Slot.Take        internal/lockq/slot.go   idle -> acquiring -> held, the log
//	Mutex.lock             sequential/recipe.go     the steps above, in order
//	lockq.Queue.Head       internal/lockq/queue.go  TryLock's look before it joins
//	lockq.Queue.Join       internal/lockq/join.go   step 1; after a lost answer, our node by GUID
//	hold.WatchQueued       internal/hold/hold.go    Join's watch on our node, behind Done
//	lockq.Queue.Line       internal/lockq/line.go   steps 2-3; twins deleted
//	lockq.Queue.AwaitGone  internal/lockq/wait.go   steps 4-5: the data watch on the node ahead
//
// and Unlock: Mutex.Unlock, lockq.Slot.Unlock, lockq.Queue.Release
// (leave.go: our node deleted by name, or later when it can not be sent
// now). A failed Lock ends in lockq.Queue.Abandon (leave.go), which
// deletes our node and its twins. The reentrant, timeout, rwlock,
// semaphore and election packages run through the same Slot and Queue.
package sequential
