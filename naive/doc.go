// Package naive is the simplest ZooKeeper lock: the lock is held by
// whichever session owns an ephemeral node at the lock path. It covers
// the acquire and release steps, why the node is ephemeral, and the study
// notes' Java demo of them, with the demo's bugs fixed and its herd effect
// kept on purpose (docs/01-naive.md).
//
// # The recipe
//
// Lock, for the path /locks/orders:
//
//  1. Create /locks/orders as an EPHEMERAL node whose data is a random id
//     for this attempt. If that succeeds, we hold the lock. (If a parent is
//     missing, create the parents as persistent nodes and try again.)
//  2. If the create fails with NodeExists, someone else holds the lock:
//     call exists on the path with a watch. If the node is already gone,
//     go to 1 at once.
//  3. Wait until the watch fires (the holder deleted its node, or its
//     session ended), ctx is done, or our own session ends. Then go to 1.
//  4. Any other error (no permission, an invalid ACL, ...) ends Lock with
//     that error. Retrying it would hide the problem and spin. A
//     connection the program has closed (Close) is one of these: Lock
//     ends with an error wrapping zk.ErrConnectionClosed (zkop.ErrConnClosed).
//     A connection that is only lost (broken, and being dialled again by
//     go-zookeeper) is not: Lock waits for the client to be back and
//     tries again, and gives up with the connection error only after a
//     few failures in a row (see "Failure modes that remain").
//
// The tree while session A holds /locks/orders and sessions B and C wait
// (taken from a run): the lock is one node, and both waiters watch that
// same node, which is why its delete wakes them all.
//
//	/locks                 persistent, made by the first Lock that needs it
//	`-- orders             EPHEMERAL, owner session A: A holds the lock
//	                       data "9f1c40e2…": the 32-hex-digit id of A's Lock call
//
//	A: data watch on /locks/orders     (its own node: Done closes if it goes)
//	B: exists watch on /locks/orders   no node of its own; waits
//	C: exists watch on /locks/orders   no node of its own; waits
//
// After a successful create, Lock reads the node back with a data watch
// (internal/hold): its ephemeralOwner proves the node is ours, its czxid is
// the fencing token (Token), and the watch closes Done when the node goes
// away without Unlock.
//
// Unlock reads the node, checks that its ephemeralOwner is our session and
// its czxid is our token, and deletes it at the version it read. It never
// deletes with version -1. The read's check is what keeps Unlock off a
// node another client made at the path after ours was lost; the version
// is no guard against that node, which starts at version 0 as ours did.
//
// # Through the code
//
// The package is its recipe and a shell; what the recipe calls lives in
// internal/lockq, shared with the queue-based locks. A Lock call goes:
//
//	Mutex.Lock             naive/mutex.go           prefixes errors
//	lockq.Slot.Take        internal/lockq/slot.go   idle -> acquiring -> held, the log
//	Mutex.lock             naive/recipe.go          the steps above
//	lockq.Fixed.Take       internal/lockq/fixed.go  step 1: the stamped create, the parents,
//	                                                findOwn after a lost answer, claim
//	hold.WatchQueued       internal/hold/hold.go    claim's read-back: the watch behind Done
//	lockq.Fixed.AwaitFree  internal/lockq/fixed.go  steps 2-3: the exists watch, the wait
//
// and Unlock: Mutex.Unlock, lockq.Slot.Unlock, lockq.Fixed.Release
// (deleteIfOurs: the guarded delete, or deleteLater when it can not be
// sent now). A failed Lock ends in lockq.Fixed.Abandon. The
// sequential lock runs through the same Slot with a lockq.Queue in place
// of the lockq.Fixed: a diff of the two packages is the recipe change.
//
// New(s, path, opts...) makes the Mutex for the lock at path on s, a
// *zklocks.Session (zklocks.Connect makes one), and sends nothing. It
// takes the options every variant shares, zklocks.WithACL and
// zklocks.WithLogger, and has none of its own; its errors wrap the
// sentinels of package zklocks (zklocks.ErrLocked, zklocks.ErrLockLost,
// ...), as every variant's do.
//
// # Why the node is ephemeral
//
// A holder that crashes never calls Unlock. With a persistent node the
// lock would stay taken forever. An ephemeral node belongs to a session and
// the servers delete it when the session ends, whether the client closed it
// or stopped sending heartbeats for longer than the session timeout; the
// delete fires the waiters' watches, and one of them takes over. The price
// is that a holder that is merely slow (a long GC pause, a partition) loses
// the lock the same way, possibly without noticing in time: Done closes
// late, never early, so pass Token to the resource you protect and let it
// refuse tokens older than the newest it has seen.
//
// # The herd effect, and what it costs
//
// Every waiter watches the same node, so every release wakes every waiter.
// All of them send a create; one wins and the others fail with NodeExists,
// set a new watch and sleep again. With N waiters a release costs N watch
// notifications and N creates, N-1 of them wasted. They are not cheap
// reads: ZooKeeper orders every create through the leader, and a create
// that fails is still a transaction (an error transaction) that the quorum
// logs and fsyncs before answering. A release therefore puts N-1 useless
// writes on the ensemble, and the thundering retries arrive together. The
// winner is whichever create reaches the leader first, so the lock is not
// fair: a waiter can lose every round.
//
// Stats makes this visible from the client: Notifications counts the watch
// events a Mutex received, Requests the requests it sent. With 8 contenders
// on a local 3-node ensemble, three runs of TestHerdEffect logged 4.55 to
// 5.38 notifications per release and 13.50 to 14.75 requests per
// acquisition (docs/01-naive.md, "Measuring the herd"; the bench adds the
// servers' own counters). The figure stays
// below N-1 = 7 because not every contender waits at every release: some
// are between a wake-up and their next watch, and those that have finished
// their rounds have left. The sequential
// package removes the herd: each waiter watches only the node just ahead
// of it, which also makes the lock FIFO.
//
// # The notes' Java demo, and what this package does instead
//
//   - Its acquire loop catches every exception and tries again forever: a
//     missing permission, a closed connection or a bad path spin the CPU
//     and the ensemble. Here only NodeExists leads to waiting and only a
//     lost connection to a retry; every other error, a closed connection
//     included, is returned, wrapped (errors.Is works with go-zookeeper's
//     errors, e.g. zk.ErrNoAuth).
//   - Its release deletes with version -1, that is "whatever node is at the
//     path". If our node already went away (session expired, an operator
//     deleted it) and another client took the lock, that delete removes the
//     other client's lock. Here Unlock deletes only the node this Mutex
//     created (same session, same czxid, version as read), and reports
//     zklocks.ErrLockLost otherwise.
//   - It keeps the CountDownLatch the waiter sleeps on in a field of a
//     shared singleton. Two threads waiting at once overwrite each other's
//     latch, one of them is never woken (or only by its timeout), and the
//     watcher may count down a latch that was just set to null. Here each
//     wait has its own watch channel (go-zookeeper returns one per call).
//   - It waits with a waitTime that the demo never defines (the code does
//     not compile), and a timed wait that silently turns into polling.
//     Here Lock waits for the watch and nothing else; ctx bounds the wait.
//   - It calls exists on a variable named zk where the field is named
//     zookeeper (again it does not compile).
//   - Its connection latch is static: it is counted down once per JVM, so a
//     second session object does not wait for its own connection, and the
//     same default watcher counts down the lock latch on every connection
//     event, waking the waiter for nothing. Later disconnections and
//     session expiry are ignored. Here requests wait for the connection
//     inside go-zookeeper, watches are per call, a waiter whose session
//     expires returns zklocks.ErrLockLost, and Done tells a holder it lost the lock.
//   - It returns true from every path of acquire, and its release swallows
//     errors: the caller can not tell what happened. Here every method
//     returns an error that says it.
//
// # Failure modes that remain
//
// The create that would take the lock can be answered by a broken
// connection (zk.ErrConnectionClosed) after the servers applied it. The
// lock path can not tell us whether the node there is ours, but the random
// id in its data can: once the client is back, Lock syncs, reads the node,
// and holds the lock if the node carries the id of this call and belongs
// to the current session. Every create of one call carries the same id, so
// a create that the look missed (or that was applied late) is recognised
// when the next create finds the path taken. (This is the naive recipe's
// version of the GUID that the sequential recipe puts in its node names.)
// When Lock gives up instead, or a create's answer arrives after ctx
// ended, a background clean-up deletes the node if it carries the id.
//
// ZooKeeper can not make a delete conditional on the node's owner. Unlock
// checks owner and czxid with a read, then deletes at the version read; if,
// within that one round trip, an operator deletes our node and another
// client creates its own (which also has version 0), our delete removes
// theirs. The sequential recipe does not have this window: its node names
// are unique.
//
// A second window comes from go-zookeeper, which keeps a request it could
// not send yet across a reconnection, also one that finds the session
// expired and opens a new session: the request then goes out on the new
// session (TestQueuedDeleteOutlivesExpiredSession in internal/zkop shows
// it). A versioned delete of the lock path queued while the client had
// no connection would remove the next holder's node, since its version is
// 0 like ours was. So no delete of the path is handed to go-zookeeper
// unless the client is connected with the session that owns our node at
// that very moment (zkop.Client.DeleteOnSession, in Unlock and in every
// background clean-up, which also checks the node's czxid first). What
// remains is a delete queued in the instant between that check and its
// write, on a connection that dies in that instant, followed by a
// reconnection that finds the session expired within one round of dials
// (a member that accepts the connection and then stalls the handshake):
// microseconds, and a session timeout of stalled dials on top. A name
// that only this acquisition uses, as the sequential recipe's GUID, is
// the cure for both windows.
//
// # Operation log
//
// zklocks.WithLogger(l), passed to New, makes the Mutex log its operations
// to l, a *slog.Logger, to trace lock problems afterwards (docs/oplog.md).
// Without it, or with nil, nothing is built or allocated. Every record
// carries lock=naive and path; the messages and keys are stable:
//
//	acquire  INFO   node token session waited
//	wait     DEBUG  watch session                 (one per exists watch)
//	release  INFO   node token held [err]
//	lost     WARN   node token held reason err    (reason: node_deleted, session_expired, cut_off)
//	abandon  INFO   waited err                    (Lock failed; not a TryLock that found the lock taken)
//
// node is the lock path itself and token its czxid; session is 0x-hex.
// A lost hold logs lost when the loss is seen (before Done closes) and no
// release at its Unlock. The herd effect shows in the log: every waiter
// logs a wait for each release it sleeps through, so with N waiters a
// release is followed by up to N-1 new waits. internal/oplog has the
// full table, shared by every variant.
package naive
