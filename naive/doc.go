// Package naive is the simplest ZooKeeper lock: whichever session owns an
// ephemeral node at the lock path holds the lock, and every waiter
// watches that one node, herd effect included on purpose.
// docs/01-naive.md gives the reasons for each step, and what the study
// notes' Java demo gets wrong.
//
// # The recipe
//
//  1. Create the lock path as an EPHEMERAL node whose data is a random id
//     for this Lock call (missing parents are made, persistent). Created:
//     the lock is ours, and a read-back with a data watch gives the token
//     (the node's czxid) and closes Done if the node goes.
//  2. NodeExists: someone else holds it. TryLock stops with
//     zklocks.ErrLocked; Lock sets an exists watch on the path, and goes
//     back to 1 at once if the node is already gone.
//  3. Wait for the watch (the holder deleted its node, or its session
//     ended), ctx, or the end of our own session; then go back to 1.
//  4. Any other error ends Lock, wrapped: a closed connection
//     (zkop.ErrConnClosed) too. A lost one is retried once the client is
//     back, and ends Lock only after a few failures in a row.
//  5. Unlock reads the node, checks that its owner is our session and its
//     czxid our token, and deletes it at the version read, never with -1.
//
// # Guarantees
//
//   - Mutual exclusion among live sessions; a crashed holder's node goes
//     with its session, and a waiter takes over with a larger token.
//   - Unlock deletes only our own node (owner and czxid checked first, but
//     for the window below); a lost create answer leaves nothing behind.
//
// # Failure modes
//
//   - The herd: every release wakes every waiter, and each losing create
//     is a failed write the quorum logs (TestHerdEffect measures it).
//   - No fairness: the next holder is whichever create reaches the leader
//     first.
//   - The fixed path leaves windows a unique name would close: an
//     operator's delete and another client's create inside Unlock's one
//     round trip, or a delete queued across a session's expiry.
//   - A paused holder wakes up believing it holds: fence with Token.
//
// # Through the code
//
// The package is its recipe, a shell, and its lock node (fixed.go),
// which a lockq.Slot drives as it drives the other locks' queue.
// A Lock call goes:
//
//	Mutex.Lock          naive/mutex.go          prefixes errors
//	lockq.Slot.Take     internal/lockq/slot.go  idle -> acquiring -> held, the log
//	Mutex.lock          naive/recipe.go         the steps above
//	lockNode.Take       naive/fixed.go          step 1: the stamped create, the parents,
//	                                            findOwn after a lost answer, claim
//	hold.WatchQueued    internal/hold/hold.go   claim's read-back: the watch behind Done
//	lockNode.AwaitFree  naive/fixed.go          steps 2-3: the exists watch, the wait
//
// and Unlock: Mutex.Unlock, lockq.Slot.Unlock, lockNode.Release
// (deleteIfOurs: the guarded delete, or deleteIfOursLater when it can not
// be sent now). A failed Lock ends in lockNode.Abandon. The sequential
// lock runs through the same Slot with a lockq.Queue in place of the
// lockNode: a diff of their recipes is the recipe change.
package naive
