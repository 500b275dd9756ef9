// Package rwlock is a read-write lock on ZooKeeper: many readers or one
// writer at a time, in the order they came. It is the next rung after the
// four mutexes: their queue (the sequential package,
// docs/02-sequential.md) with the "Shared Locks" recipe of ZooKeeper's
// recipes page on top, the lock
// Curator ships as InterProcessReadWriteLock and kazoo as ReadLock and
// WriteLock. recipe.go is sequential's recipe with the changes marked
// "rwlock:"; diff the two files to see them.
//
// New(s, path, opts...) makes a Mutex for the lock at path on s, a
// *zklocks.Session, and sends nothing; besides the options every variant
// shares (zklocks.WithACL, zklocks.WithLogger) it takes this package's
// WithData. Its Lock and Unlock take the write lock, RLock and RUnlock
// the read lock; Writer and Reader give each side as a zklocks.Locker.
//
// # Through the code
//
// A Lock or RLock call goes:
//
//	Mutex.Lock, RLock      rwlock/mutex.go         the writer's or the reader's Side
//	Side.Lock              rwlock/side.go          prefixes errors
//	Side.acquire           rwlock/side.go          the recipe for this side; a downgrade does not wait
//	lockq.Slot.TakeIf      internal/lockq/slot.go  idle -> acquiring -> held, the log
//	Mutex.admitLocked      rwlock/side.go          under the lock: both sides' state, a downgrade noted
//	Mutex.lock             rwlock/recipe.go        sequential's steps, waiting only for Side.blocks
//	lockq.Queue            internal/lockq          join, line (Line.Only), await the predecessor
//	Mutex.writeHoldLasted  rwlock/side.go          a downgrade: our write node lived until our reader's
//
// and Unlock or RUnlock: Mutex.Unlock or RUnlock, Side.Unlock,
// lockq.Slot.Unlock, lockq.Queue.Release (leave.go: our node deleted by
// name, or later when it can not be sent now).
//
// # The recipe
//
//  1. Join: create <path>/_c_<guid>-__WRIT__ (a writer) or
//     <path>/_c_<guid>-__READ__ (a reader) as EPHEMERAL_SEQUENTIAL, so
//     readers and writers queue in one line.
//  2. List the children and sort them by sequence number.
//  3. Keep only the nodes ahead of ours that block us: for a writer
//     every node, for a reader only the writers. None: the lock is ours.
//  4. Otherwise set a data watch on the closest of them, the last one
//     ahead of our node, and wait.
//  5. When it is deleted: if it was the only one that blocked us, the
//     lock is ours with no further request; otherwise list again (2).
//  6. Unlock and RUnlock delete our node.
//
// The tree of readers R1 and R2 holding the read lock, a writer W waiting,
// and a reader R3 that came after W (names from a run; Curator's names,
// EPHEMERAL_SEQUENTIAL, one line for both kinds):
//
//	/locks/catalog                                            container
//	|-- _c_ccade6b77793509d67ac6878a23210ca-__READ__0000000000   R1 reads
//	|-- _c_63c3ec61e16182e9d9991277b242d1a0-__READ__0000000001   R2 reads
//	|-- _c_9eba3f1699a7a0ad5238b748c1910149-__WRIT__0000000002   W waits, watches ...0001
//	`-- _c_770fb209d6d13618a5390ac47f61ec87-__READ__0000000003   R3 waits, watches ...0002
//
//	R3 waits for W although R1 and R2 read: no reader passes a waiting writer.
//
// # Why each waiter watches what it watches
//
// A writer watches its predecessor, whatever its kind, as in sequential:
// it can hold only when nothing at all is ahead of it. A reader watches
// the closest writer ahead of it, because readers ahead of it do not keep
// it out, and of the writers ahead the closest is the last to go. So:
//
//   - a writer's release wakes the readers right behind it (every one of
//     them can hold now) and nobody else: a writer behind those readers
//     watches the last of them;
//   - a reader's release wakes at most one contender, the writer right
//     behind it, if any.
//
// Each release wakes only the waiters that watched the released node:
// no herd (TestReleaseWakesOnlyThoseWhoCanHold counts the events each
// waiter receives). A writer behind several readers can still wake for
// nothing when they leave out of queue order: it watched the last of
// them, which left first; it lists again and watches the next. A reader considers only nodes
// ahead of its own; kazoo 2.8's ReadLock took the last writer of the whole
// queue, which could be one behind it waiting for it, a deadlock (kazoo
// #649; TestReaderWatchesNoWriterBehindIt).
//
// # Fairness
//
// One line for both kinds means first come, first served: a reader that
// comes after a waiting writer waits for that writer, so a stream of
// readers can not starve a writer (TestWriterIsNotStarvedByLaterReaders).
// The price: a writer in the line splits the readers into batches.
//
// # Downgrade, and no upgrade
//
// A Mutex that holds the write lock may call RLock: its reader does not
// wait for its own writer. After Unlock it goes on reading, and no other
// writer got in between. That is safe only while no other writer is
// queued behind ours: such a writer's node is ahead of our new reader's,
// it would not wait for our reader, and would hold beside it the moment we
// released the write lock (the bug of CURATOR-621). Our RLock can not wait
// for that writer either, since it waits for our write lock. So a
// downgrade with a writer waiting fails at once with ErrDowngrade and
// leaves nothing behind (TestDowngradeRefusedWhileAnotherWriterWaits);
// otherwise it succeeds (TestDowngradeKeepsWritersOut). After the read
// node is made, RLock checks that our write node still exists: nodes never
// come back, so it lived until our reader did. A write hold that was lost
// (its session expired), or released by a racing Unlock, fails the
// downgrade with ErrDowngrade instead (TestDowngradeRefusedAfterTheWriteHoldWasLost).
// RLock while this Mutex's own Lock still waits is refused with
// zklocks.ErrAlreadyLocked: the read node could come first, and the writer would
// wait for its own reader.
//
// Upgrading, Lock while this Mutex reads, is refused with ErrUpgrade: the
// writer would wait for our own reader for ever. Release the read lock and
// take the write lock, knowing that another writer may come first.
//
// # Other clients on the same path
//
// Our names are Curator's, so Curator's read-write lock sees our readers
// and writers as its own. We take "__READ__" (ours, Curator's) and
// "__rlock__" (kazoo's) as readers and every other contender, kazoo's
// "__lock__" and the plain mutexes of this module among them, as a writer,
// which is the safe guess (TestNamesOfOtherClients). What the other
// clients make of ours is measured with the real clients in
// internal/interop (TestMixedReadWriteClients) and written in chapter 7.
//
// # Guarantees and failure modes
//
// Everything sequential says of connection loss, lost create answers,
// session expiry, Done and Token holds here, since both kinds of node go
// through the same queue client (internal/lockq). A writer's token is
// larger than that of every hold before it; readers that share the lock
// have tokens in the order they queued, not in the order they got in. As
// for every ZooKeeper lock, a paused holder can go on believing it holds
// after its session expired: fence the resource with Token.
package rwlock
