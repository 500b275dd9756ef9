// Package reentrant is the sequential lock made re-entrant: an owner that
// already holds the lock can lock it again without queueing behind itself,
// and must unlock it as many times as it locked it: it records who holds
// the lock and how often (docs/03-reentrant.md) on top of package
// sequential, which it uses as is.
//
// # Recipe
//
// Java locks key re-entry on the calling thread. Go has no goroutine
// identity, so the owner is explicit and travels in the context:
//
//	ctx = reentrant.WithOwner(ctx, "job-42")
//	m.Lock(ctx)   // first Lock: one sequential hold (one node), count 1
//	m.Lock(ctx)   // same owner: count 2, returns at once
//	m.Unlock(ctx) // count 1, still held
//	m.Unlock(ctx) // count 0: the node is deleted
//
// The count includes the first Lock (1 after it) and the node goes when it
// returns to zero; the notes' sketch counts only the entries after the
// first, which is the same bookkeeping shifted by one.
//
// Each hold is one node of the sequential recipe (recipe.go, a marked copy
// of sequential/recipe.go on the same queue client, internal/lockq): an
// ephemeral-sequential node under the lock path whose waiters watch only
// their predecessor (docs/02-sequential.md). Its data names the holder,
// as JSON (see Holder and ParseHolder):
//
//	{"host":"web-3","pid":4711,"owner":"job-42","mode":"memory"}
//
// so sequential.Contenders, or `zklocks inspect`, shows who holds the lock
// and who waits for it, whichever process they run in (the notes identify
// the client by IP and thread id; host, pid and owner play that part here).
//
// The tree while owner job-42 holds the lock three levels deep (InNode
// mode) and job-43, an owner of another Mutex, waits (taken from a run;
// nodes as in package sequential): re-entry adds no node, and an owner of
// the holder's own Mutex waits in the process, not in the queue.
//
//	/locks/orders                                           container
//	|-- _c_33a0187a01d5d063947e5f72a3747c48-lock-0000000000   Mutex 1: job-42 holds
//	|     {"host":"vm","pid":28245,"owner":"job-42","mode":"node","count":3}
//	`-- _c_6ed50dd95dbedfabe313f7edcdf93a22-lock-0000000001   Mutex 2: job-43 waits,
//	      {"host":"vm","pid":28245,"owner":"job-43","mode":"memory"}  watches ...0000
//
//	job-44 on Mutex 1: no node; waits in the process until job-42's count is 0,
//	then joins the queue
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
//
// New(s, path, opts...) makes a Mutex for the lock at path on s, a
// *zklocks.Session, and sends nothing; besides the options every variant
// shares (zklocks.WithACL, zklocks.WithLogger) it takes this package's
// WithCountMode.
//
// A Mutex is one contender on ZooKeeper, shared by any number of owners in
// the process. While one owner holds or acquires the lock, the others wait
// in the process for its turn (honouring their ctx), and take the
// ZooKeeper lock only once the holder has fully released it. Curator's
// InterProcessMutex, keyed on threads, instead lets every thread create its
// own node; a Mutex here never has more than one node, so the in-process
// owners do not add to the queue every other client has to watch. Owners of
// different Mutexes, in this process or another, queue on ZooKeeper.
//
// # No owner, wrong owner
//
// Lock, TryLock and Unlock without an owner in ctx fail with ErrNoOwner.
// Explicit beats a surprise: a hidden default owner would make every
// goroutine that forgot WithOwner re-enter the others' hold, which is no
// mutual exclusion at all. Unlock by an owner that does not hold the lock
// fails with ErrNotOwner (someone else holds it) or zklocks.ErrNotLocked (nobody
// does) and changes nothing. Lock by an owner whose first Lock is still
// waiting (one owner used by two goroutines at once) fails with
// zklocks.ErrAlreadyLocked.
//
// # Where the count lives: two modes
//
// WithCountMode chooses, and the benchmark compares:
//
//   - InMemory (the default, Curator's choice): the count is a field of the
//     Mutex. A re-entry or an inner Unlock sends nothing to ZooKeeper.
//   - InNode (the notes' way): the count is also in the node's data, and
//     each re-entry and each inner Unlock is one versioned setData. That
//     write fires the holder's own data watch on its node, which the hold
//     monitor sets again at once with a getData: two requests from the
//     holder per re-entry and per inner Unlock, and one notification. The
//     depth is visible to inspection, and the write doubles as a check that
//     the node is still ours: BadVersion (someone else wrote to our node) or
//     NoNode (deleted) ends the hold as lost.
//
// Measured with BenchmarkReentry and BenchmarkReentryWithWaiter (one op =
// a nested Lock plus its Unlock on a held lock; local 3-node ZooKeeper 3.8
// ensemble on loopback, fsync on, 200 ms ticks, 2 shared and busy cores;
// three runs of -benchtime 2s):
//
//	mode      ns/op           requests/op  waiter requests/op  waiter notifications/op
//	memory    160-260 ns      0            0                   0
//	node      4.0-8.9 ms      2.02         2.00                2.00
//
// In node mode each op is two quorum writes, each fsynced by a majority:
// about 2 ms a write here, some 25,000 times the in-memory op. The 0.02 is
// the holder's own data watch as the hold monitor handled it when these
// runs were made: it set the watch again only at its next poll, so few
// writes found one to fire. The monitor now sets it again as soon as it
// fires (internal/hold), so by the code a node-mode op costs the holder
// about 4 requests (two writes, two reads) and 2 notifications; the table
// has not been measured again since. The waiter columns are paid by someone
// else: the next contender in the queue watches the holder's node with a
// data watch, so every count write wakes it and it reads the node again
// (one notification and one request per write). The last Unlock costs
// what a plain one does, one delete, whatever count writes moved the
// node's version on (the sequential lock deletes its own node by name, at
// any version).
//
//	go test -run '^$' -bench BenchmarkReentry -benchtime 2s ./reentrant/
//
// # Guarantees
//
// Those of package sequential (mutual exclusion between holds, FIFO among
// ZooKeeper contenders, herd-free waiting, fencing tokens that grow from
// hold to hold, no orphan nodes, crash safety), plus:
//
//   - Owners exclude each other whether they share a Mutex, a session, or
//     nothing at all. Re-entries keep the hold's node and its Token.
//   - The node is deleted only when the count returns to zero.
//   - A lost hold is never re-entered. When the hold is lost (node deleted,
//     session expired, cut off long enough for the session to expire, or an
//     InNode write failed), its count is dropped and Done closes. Token
//     keeps returning the lost hold's token, as in the other variants,
//     until the last Unlock the owner still owed it (or a new hold). Each
//     of those Unlocks returns zklocks.ErrLockLost instead of pretending to
//     succeed, and a later Lock by that owner queues for a new node (new
//     token, count 1). Curator's re-entry only increments a local count,
//     whether or not the hold still exists.
//   - An owner of this Mutex waiting for a holder that loses the lock goes
//     ahead without waiting for the loser to Unlock.
//
// # Failure modes
//
//   - A re-entry in InMemory mode trusts Done, which closes late: when the
//     watch sees the node go or, for a holder cut off, when the session's
//     epoch ends (nine tenths of a session timeout after the last proven
//     refresh), and never in a paused process. A paused or partitioned
//     holder can re-enter a hold the ensemble has already ended. Use Token
//     to fence the resource, as with every variant.
//   - Lost in the middle of a call tree: the inner Lock takes a new hold,
//     the outer code ran for a while without the lock. The Unlocks owed to
//     the lost hold report it (innermost Unlock first belongs to the newest
//     hold); check Done or Token if a section must be continuous.
//   - InNode writes are not cut short by the caller's ctx (an abandoned
//     write would leave the node's version unknown); each waits at most a
//     session timeout. A write whose answer was lost with the connection
//     is read back once the client is back (the lock is the node's only
//     writer, so the version says whether it was applied) and made again
//     if it was not, so a blip shorter than the session timeout does not
//     cost the hold (TestCountWriteSurvivesBlip). A write that is refused,
//     or can not be made within the session timeout, ends the hold.
//   - In-process owners waiting for the turn are served in no guaranteed
//     order; FIFO holds among ZooKeeper contenders only.
//
// # Errors
//
// Every error names this package, the operation and the lock path once
// (internal/lockerr), and errors.Is finds in it the sentinels every
// variant shares (zklocks.ErrLocked, zklocks.ErrLockLost, ...), this
// package's own (ErrNoOwner, ErrNotOwner), and ZooKeeper's (zk.ErrNoAuth,
// zk.ErrBadVersion) where they are the cause.
//
// # Operation log
//
// zklocks.WithLogger(l), passed to New, makes the Mutex log its operations
// to l, a *slog.Logger, to trace lock problems afterwards (docs/oplog.md).
// Without it, or with nil, nothing is built or allocated. Every record
// carries lock=reentrant, path and the owner; the messages and keys are
// stable:
//
//	acquire  INFO   node token session waited
//	wait     DEBUG  node watch ahead session      (queued on ZooKeeper behind watch)
//	wait     DEBUG  behind                        (waits in this process for owner behind)
//	reenter  DEBUG  node token count              (the holder locked again)
//	exit     DEBUG  node token count              (an Unlock that leaves the lock held)
//	release  INFO   node token held [err]         (the last Unlock)
//	lost     WARN   node token held reason err    (reason: node_deleted, session_expired, cut_off, count_write)
//	abandon  INFO   [node] waited err             (Lock failed; not a TryLock that found the lock taken)
//
// Acquire, the ZooKeeper wait, release, lost and abandon are written as
// in the sequential lock, under this package's name; each event is
// written once. waited counts from the call of Lock, time spent waiting for the turn
// included. count_write is a loss of InNode mode: the count could not be
// written. internal/oplog has the full table, shared by every variant.
package reentrant
