// Package sequential is the classic ZooKeeper lock: every contender
// queues as an EPHEMERAL_SEQUENTIAL child of the lock path, the first in
// the queue holds the lock, and every other contender watches only the
// node just ahead of it. It is the recipe of ZooKeeper's own recipes page
// and of Curator's InterProcessMutex, taught in docs/02-sequential.md; the
// reentrant and timeout packages build on it.
//
// # The recipe
//
//  1. Join: create <path>/_c_<guid>-lock- as EPHEMERAL_SEQUENTIAL.
//     ZooKeeper appends a ten-digit sequence number, unique under the
//     parent and growing with every create. The lock path is made on
//     first use, as a container node, which the server removes once its
//     last child is gone. Watching our own node starts right away (read
//     with a data watch: its czxid is the fencing token).
//  2. List the children and sort them by sequence number. Children without
//     one are not contenders and are ignored.
//  3. First in the list: the lock is ours.
//  4. Otherwise set a data watch (getData) on the node just ahead of ours
//     and wait. If that node is already gone, go back to 2.
//  5. When the watch fires because that node was deleted: if it was the
//     only node ahead of us at the last listing, the lock is ours, with no
//     further request (see "Handoff without a read"); otherwise go back to 2.
//  6. Unlock deletes our node, which fires the watch of the one contender
//     behind us.
//
// The tree of three contenders, A, B and C, each on its own session and in
// that order (names from a run; every child is EPHEMERAL_SEQUENTIAL, and
// each contender also keeps a data watch on its own node): A holds, and
// each waiter watches only the node just ahead of it.
//
//	/locks/orders                                           container
//	|-- _c_ed16e5dcad6842c435e98e05379dc27f-lock-0000000000   A holds
//	|-- _c_d7f88d30fe5f0dd03b81046ef83dc91e-lock-0000000001   B waits, watches ...0000
//	`-- _c_b7807a458229ede21f16f4a42dcb5d5e-lock-0000000002   C waits, watches ...0001
//
//	A's Unlock deletes ...0000: only B wakes, and holds; C sleeps on.
//
// Steps 1 to 5 are the function lock in recipe.go, top-down, numbered as
// here: read that file first. Each step is one call into the queue client
// below it (internal/lockq), which keeps the hardening out of the recipe:
// retries while the connection is down, the recovery of a create whose
// answer was lost, the watch on our own node, twins, and the clean-up of
// a failed Lock.
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
//
// # Making one
//
// New(s, path, opts...) returns a Mutex for the lock at path on s, a
// *zklocks.Session made by zklocks.Connect (or zklocks.NewSession around
// a connection of your own). It checks its arguments and sends nothing.
// The options are zklocks.Options: zklocks.WithACL and zklocks.WithLogger,
// which every variant takes, and this package's WithData, the data stored
// in the Mutex's node (Contenders returns it); another variant's option
// fails New with zklocks.ErrBadOption. Any number of locks, of any
// variant and on any paths, can share one Session: they share its
// connection, its granted session timeout and its one clock (see "Done,
// and why a holder still needs fencing"). The errors that every variant
// returns (zklocks.ErrLocked, zklocks.ErrLockLost, ...) are declared in
// package zklocks.
//
// # Why only the predecessor: no herd
//
// Had every waiter watched the holder's node (naive) or the children of
// the lock path, every release would wake every waiter, and all of them
// would hit the ensemble at once only for all but one to go back to
// sleep: the herd effect (docs/01-naive.md measures it). Here each node
// is watched by exactly one other contender, so a release wakes one waiter, whatever
// the number of contenders. TestHerdFigures counts it with the servers'
// own mntr counters, 16 contenders each on its own session: 2.0 quorum
// writes per acquisition (create and delete), 1.0 client notified per
// release, and 2.0 watchers fired per release. The second watcher is the
// releasing holder's own watch on its node (it is how Done learns of a
// deleted node); it fires on the holder's own delete and wakes nobody,
// but go-zookeeper v1.0.4 can not remove a watch before the delete, so
// the server counts it.
//
// A data watch rather than exists, as Curator does: exists on a node that
// has just been deleted returns false but leaves a watch behind, waiting
// for a create that never comes; getData fails with NoNode and leaves
// nothing.
//
// # Fairness
//
// The leader hands out sequence numbers in the order it commits the
// creates, and each waiter waits only for its predecessor, so contenders
// are served strictly in the order they joined: first come, first served,
// and nobody starves (TestFIFO).
//
// # Handoff without a read
//
// Sequence numbers only grow: a node created after our listing sorts
// behind us, and every node ahead of us was in that listing (ZooKeeper
// shows a session at least its own writes, and those nodes were created
// before ours). So when the listing showed exactly one node ahead of us
// and that node is deleted, nothing can be ahead of us any more: the
// waiter holds the lock the moment the notification arrives, with no
// getChildren in between (TestReadFreeHandoff). A predecessor that was
// not the holder may leave too (its Lock was cancelled): then the waiter
// lists again and watches its new predecessor (TestPredecessorGivesUp).
//
// # Connection loss and the GUID
//
// When the connection goes while the create is in flight, the client can
// not tell whether the create was applied. Creating again could leave an
// orphan of our own session at the front of the queue, which nobody would
// ever delete: the lock would be stuck until our session ends. Every node
// name therefore carries a random 128-bit GUID made for this acquisition;
// after the client reconnects, the children that carry it are ours and
// none is created twice (TestConnectionLostDuringCreate). Curator calls
// this protected mode; kazoo and go-zookeeper do the same.
//
// One trap remains (Curator's CURATOR-498 and CURATOR-604): if the
// session expired in the meantime, the listing can still show the node of
// the dead session, which the server is about to delete. A node is taken
// as ours only if its ephemeralOwner is the client's current session; a
// node of an expired session is left to vanish and we create again on the
// new session (TestFoundNodeOfAnotherSession, TestSessionExpiredDuringCreate).
// Should a create whose answer was lost be applied after all, it leaves
// a twin: a second node with our GUID. Every listing of the acquisition
// while it waits deletes any twin it shows, and a failed Lock sweeps every
// node with its GUID. Unlock deletes only the node it holds and never
// looks for twins: one that no listing showed (it would sort behind ours)
// stays in the queue until our session ends.
//
// # Nothing left behind
//
// After a cancelled ctx, a failed TryLock, a lost node or any error after
// the create, Lock deletes its node before it returns, even when its
// create's answer was lost (TestCancelWhileCreateAnswerLost).
// go-zookeeper's own Lock leaves the node behind in these cases
// (samuel/go-zookeeper#229). The clean-up does not use the caller's ctx,
// which is usually the reason it runs. It gets a second of its own (or the
// session timeout, if shorter), and what it can not finish by then, because
// the ensemble can not be reached, goes on in the background until the
// node is gone, a server refuses the request outright, the connection's
// session has changed (the old session's nodes went with it), or the
// connection has been closed. It never stops because time has passed: an
// ensemble without a quorum expires no session, so a client that gets
// back after a long outage may still find its session, and its node,
// alive (zkop.Client.Later). So a Lock cut off from the ensemble
// still returns about when its ctx ends (TestCutOffWhileJoining), and the
// node goes as soon as the connection is back. Unlock during a partition
// does the same, so the node is never forgotten while the session lives
// (CURATOR-678, TestUnlockWhileCutOff).
//
// # Other clients on the same path
//
// The sequence number is read from the end of every child's name, so
// Curator (_c_<uuid>-lock-N), kazoo (<uuid>__lock__N) and go-zookeeper
// (_c_<guid>-lock-N) contenders on the same path are queued with ours
// (TestForeignChildren, with nodes made by hand). That is only half of
// mutual exclusion: the other client must honour our nodes too.
// internal/interop's TestMixedClients runs the real clients (Debian's
// Curator 5.4 and kazoo 2.8) beside this package, reentrant and timeout
// on one path and checks the merged history: 300 to 361 holds per pair,
// no double holder, in the pairs marked safe below.
//
//   - Curator's InterProcessMutex (5.4) sorts children by the text after
//     the last "lock-" in their names, which ours have: Curator and this
//     package exclude each other.
//   - kazoo's Lock (2.8) counts as contenders only children whose names
//     end in "__lock__" and a sequence number, and ignores every other
//     child. Built with its defaults it takes the lock while one of ours
//     holds it; it honours ours only when built with
//     extra_lock_patterns=["-lock-"].
//   - Curator and kazoo on one path overlap whatever this package does:
//     kazoo's names have no "lock-", so Curator sorts them by their whole
//     name, which does not put them in sequence order with its own.
//
// Measured with the real clients (go test -v -run TestMixedClients
// ./internal/interop, 2 contenders of each client, 2ms holds): this
// package with Curator and with kazoo given extra_lock_patterns, 0 double
// holders; with kazoo's defaults, 130 of 287 holds overlapped another;
// Curator with kazoo (defaults), 114 of 300.
//
// After 2^31-1 creates under one lock path the counter wraps to negative
// numbers. Sorting uses serial-number arithmetic, which stays right
// across the wrap as long as the oldest and the newest live contender
// are fewer than 2^31 creates apart (kazoo #606; TestSortQueue). Curator
// and kazoo compare the numbers as text and go-zookeeper as signed
// integers, so once the counter has wrapped they no longer agree with us,
// or with each other, on the order: mix clients on one path only while
// its counter is below 2^31.
//
// # Done, and why a holder still needs fencing
//
// Done closes when the hold ends: released, node deleted, session expired,
// or the client unable to show, for so long that the leader may expire its
// session, that the leader has refreshed it. It can not know whether the
// leader has, so it gives the hold up a tenth of a session timeout before
// it can: nine tenths of a session timeout after the latest moment at
// which the client can prove that the leader refreshed the session
// (internal/liveness: an answered request counts once a later write or
// sync, sent a quarter of a session timeout after its answer, is answered
// too). Pings and reads alone prove nothing: a follower cut off from the
// leader goes on answering them for syncLimit ticks while the leader,
// which hears of that follower's sessions only through it, may expire
// them. That clock belongs to the session, not to the lock: every lock on
// one zklocks.Session shares it, the session's keeper sends a sync when
// nothing has gone through the leader for an eighth of a session timeout,
// and each hold waits on the session's epoch (zklocks.Session.Done), with
// no timer of its own, so a thousand held locks cost the servers what one
// does. A holder survives a disconnection (or an election) of about half
// its session timeout; choose the session timeout with that in mind.
// zklocks.Connect learns the one the servers granted (they clamp requests
// to 2-20 tick times by default); zklocks.NewSession must be told it.
// Done is a late hint. A process that is paused (a GC pause, a stopped
// VM, a slow disk) can not watch anything:
// the servers expire its session, another contender gets the lock, and
// the paused process wakes up still inside its critical section
// (docs/05-failure-modes.md). No lock can prevent this. The resource
// itself must reject the late writer: pass Token (the czxid of the node, which grows with
// every hold on the path) with every write and have the resource refuse
// tokens smaller than the largest it has seen.
//
// # What the notes' demo gets wrong
//
// The demo sorts the full names (mixing name forms breaks the order),
// deletes with version -1 by a name that only its sequence number makes
// unique and that may be left over from an earlier acquisition (sequence
// numbers start over when the lock path is removed and made again; ours
// also carry the acquisition's GUID), creates with no protection against
// a lost answer, leaves its node behind when interrupted, and gives no
// sign when its node or session is lost. Each of these has a test here.
// Re-entrancy is in package reentrant; the timeouts and the lease in
// package timeout.
//
// # Operation log
//
// zklocks.WithLogger(l), passed to New, makes the Mutex log its operations
// to l, a *slog.Logger, to trace lock problems afterwards (docs/oplog.md).
// Without it, or with nil, nothing is built or allocated. Every record
// carries lock=sequential and path; the messages and keys are stable:
//
//	acquire  INFO   node token session waited
//	wait     DEBUG  node watch ahead session      (one per predecessor watched)
//	release  INFO   node token held [err]
//	lost     WARN   node token held reason err    (reason: node_deleted, session_expired, cut_off)
//	abandon  INFO   [node] waited err             (Lock failed; not a TryLock that found the lock taken)
//
// node is this Mutex's node, token its czxid, watch the predecessor's
// node, ahead the number of contenders before it, session 0x-hex. A lost
// hold logs lost when the loss is seen (before Done closes) and no
// release at its Unlock. Where the naive lock logs a wait for every waiter
// at every release, here a release wakes one waiter, which logs acquire or
// (its predecessor left without holding) one new wait. The reentrant and
// timeout locks log through this package under their own name
// (lock=reentrant, lock=timeout), each event once. internal/oplog has the
// full table, shared by every variant; ExampleWithLogger shows the output.
package sequential
