// Package timeout is the sequential lock (package sequential) with two time
// limits that are easy to confuse, because they protect different parties
// (docs/04-timeout.md):
//
//   - An acquire timeout bounds how long a contender waits. It protects the
//     waiter. Lock gives up when ctx is done; LockTimeout(ctx, d) gives up
//     after d and says so with ErrWaitTimeout. Either way the waiter's node
//     is deleted before the call returns, or, if the ensemble cannot be
//     reached at that moment, in the background until it is gone or the
//     session has ended.
//   - A hold lease bounds how long a holder keeps the lock without showing
//     it is alive. It protects everyone else. With WithLease(d) the holder
//     renews its lease every d/3; a holder that goes d without a renewal is
//     evicted by the waiters, even though its session is alive.
//
// New(s, path, opts...) makes a Mutex for the lock at path on s, a
// *zklocks.Session, and sends nothing; besides the options every variant
// shares (zklocks.WithACL, zklocks.WithLogger) it takes this package's
// WithLease. Without WithLease it has no lease of its own, and still
// judges the leases of the contenders ahead of it.
//
// LockTimeout is a method rather than an option because the bound belongs
// to the call, not to the lock (one process may wait 200ms for a lock in a
// request handler and indefinitely in a batch job), and because an error of
// its own tells the caller which limit was hit: the bound, or ctx's own
// deadline.
//
// The tree of a holder A and two waiters B and C with a 3s lease (taken
// from a run; nodes as in package sequential): each node states its
// lease, the holder's says "held", and only B, right behind the holder,
// judges whether that lease has run out.
//
//	/locks/orders                                           container
//	|-- _c_eb2251289f106cd62d685908b903da20-lock-0000000000   "lease=3000ms held"
//	|     A holds; rewrites its data every 1s (lease/3), which moves its mtime
//	|-- _c_95daec0fa0b401107c7c2c7030930884-lock-0000000001   "lease=3000ms"
//	|     B watches ...0000 (woken by every renewal) and judges A's lease
//	`-- _c_e6daec975537e29d69556b820a369b7b-lock-0000000002   "lease=3000ms"
//	      C watches ...0001; leaves the judging to B
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
//
// # Session expiry and lease expiry
//
// Every lock of this module ends with its holder's session: ZooKeeper
// deletes the holder's ephemeral node once it has not heard from the
// client for the session timeout. Heartbeats keep the session, and the
// client library sends them, not the code that holds the lock; how long the
// work under the lock takes does not matter to the session. The session timeout has to be long enough to
// ride out a leader election or a network blip, so a dead or partitioned
// holder blocks the lock for that long.
//
// A lease is a second, independent clock. The holder keeps it by writing
// to its own node, and the waiters, not the servers, end it. It can be
// shorter than the session timeout: with a 30s session and a 3s lease a
// holder that stops renewing loses the lock after about 3s. The holder
// keeps its session; only its hold ends.
//
// In Go the renewal is a goroutine of the holder's process, like the
// heartbeats. A process that freezes as a whole (SIGSTOP, a VM paused,
// swapping) stops both, so there the lease buys a shorter takeover than
// session expiry. A lease renewed in the background proves that the
// process and its connection are alive, not that the work under the lock
// makes progress.
//
// # The lease record
//
// A contender's node holds its lease as ASCII text: "lease=<ms>ms" while it
// waits, "lease=<ms>ms held" once it holds the lock. The first write of a
// hold writes the "held" form (the record); every renewal writes it again
// with a versioned setData on the holder's own node. ZooKeeper stamps each
// write with the node's mtime, so the mtime of a node that says "held" is
// the ZooKeeper time of a write its holder sent while holding the lock; a
// waiter's node may have been written long ago, while it waited, but a
// "held" mtime cannot be that old. Nodes with any other data (a
// sequential lock's, Curator's, kazoo's) declare no lease and are never
// evicted.
//
// The record is not on the handoff's path: Lock returns as soon as the
// queue says we hold, and the record goes out right after, from the
// renewal goroutine. A hold released before that never sends it. Only a
// contender that waited so long that less than a renewal interval of its
// lease would be left (see below) waits for the record before Lock
// returns.
//
// # Judging expiry with ZooKeeper's clock
//
// A common recipe records the acquire time in the node and lets other
// clients compare it with their own clock, with NTP to keep clocks close. That decision trusts two clocks: the holder's, which wrote
// the time, and the waiter's, which reads it. Any skew between them moves
// the expiry by exactly the skew. A waiter five minutes fast evicts every
// holder at once; one five minutes slow never evicts. NTP narrows the skew
// while it works, but it steps clocks, a resumed VM wakes with a stale
// clock, and a process paused between reading its clock and acting acts
// on an old reading. So no client's clock decides anything here.
//
// A waiter asks ZooKeeper for the present instead. In the recipe's wait
// (recipe.go: the hook it passes to lockq.Queue.AwaitGone) it writes
// its own node (the probe; the ensemble stamps its
// mtime), then reads the head's node, and finds the lease expired when
//
//	head.Mtime + lease <= probe.Mtime
//
// Both timestamps come from the ensemble. Writing before reading makes the
// head's stat at least as new as the probe. The waiter's local clock only
// schedules the next look: from the timestamps it has read it learns a
// lower bound of ZooKeeper's clock relative to its own, and it looks again
// when the head's lease should have run out. A wrong guess, from a skewed
// or jumping clock, makes it look too early (it finds the lease alive and
// waits again) or too late. It never makes it evict early. The tests run
// holders and waiters with clocks minutes apart and see the same evictions.
//
// While the holder renews on time, waiters only read, and the judge's
// first look costs nothing: the read that set its watch on the head
// returned the head's data and stat. It writes (probes) only when a head
// looks expired. A head that holds the lock but has not written its record
// yet gets a renewal interval to do so (a live one does at once); after
// that it is judged from the first probe that follows the judge's sighting
// of it at the head.
//
// ZooKeeper's clock is the leader's wall clock, read when it proposes the
// write, so two mtimes are comparable only when one leader stamped both.
// A zxid carries its leader's epoch in its high 32 bits: when the head's
// last stamp (its mzxid) is from an earlier epoch than the judge's probe,
// the judge does not read the head's mtime at all. The head has not
// renewed in this epoch, so its last renewal came before the judge's
// first probe in it, and the lease is counted from that probe instead
// (TestJudgeComparesMtimesOfOneEpochOnly: a new leader 5s ahead of the
// old one evicts nobody early, and a stopped head is evicted one lease
// after the first probe of the new epoch; TestSkewedLeader does the same
// with a real member whose clock libfaketime sets 30 s ahead or behind,
// made leader while a holder renews). What remains: a leader whose
// clock steps within its own epoch moves every lease by the step. Members
// are few and managed, so this is a smaller risk than client clocks, but
// not zero, and one more reason for fencing.
//
// # Eviction is a compare-and-set
//
// An expired holder is evicted with a delete at the version the waiter has
// just read: a compare-and-set. If the holder renewed after that read,
// the version has moved and the delete fails with BadVersion: a holder that
// renews is never evicted, however close the race. If several waiters see
// the expiry at once, the first delete wins and the others get NoNode or
// BadVersion: exactly one eviction, counted by Evictions. The evicted
// holder's Done closes (the hold monitor sees its node deleted, and the
// next renewal finds it gone) and Err is ErrEvicted, which is also
// zklocks.ErrLockLost.
//
// One waiter judges the head: the first in the queue that speaks leases,
// which is the one right behind the head, or one whose predecessor
// declares no lease (a sequential lock, Curator or kazoo in the same
// queue: they never judge). Every other waiter sees, in the data of the
// node it watches, that the waiter ahead of it speaks leases, and leaves
// the judging to it: it only lists the queue again once per lease of that
// waiter, to notice when it has become the head (a handoff wakes only the
// new holder) and judge it if it stalls before its stamp
// (TestOnlyTheFirstLeaseWaiterJudges, TestJudgeAfterAHandoff, and
// TestWaiterBehindANonLeaseContenderJudges for the mixed queue). So the
// requests per acquisition hardly grow with the queue. The price: a
// judge that stalls with its session alive holds eviction up until its
// session expires and the waiter behind it becomes the judge. Fewer
// judges can only evict later, never earlier. Judging costs the judge one
// read per two-thirds of a lease while the holder renews; an eviction
// costs it one probe and one delete.
//
// # The holder's side
//
// The holder renews every lease/3, so two renewals in a row can fail before
// the lease is in danger. It also watches its own lease with its local
// clock, and gives the hold up (Done closes, Err is ErrLeaseExpired; it
// deletes its node once it can reach the ensemble, unless a judge has
// evicted it first) when it has gone 95% of a lease, or the lease less
// 200ms if that is sooner, without a renewal landing, for example because
// it is cut off from the ensemble. A renewal
// that finds the node gone or rewritten (NoNode, BadVersion) means the
// holder was evicted. Its lease counts from the send time of its last
// write that landed; before the record lands, from the moment just before
// its create was sent.
//
// # Why a judge never evicts a live holder
//
// Write L for the lease. The holder believes in its hold until its local
// give-up time G = lastOK + 0.95 L, where lastOK is the send time of its
// last write that landed, or, before its record lands, the moment J just
// before its create was sent. The judge deletes the head only at the
// version v it read right after a probe at ZooKeeper time p, and only when
// start + L <= p. The delete succeeds only if v is still the node's
// version, so no write of the holder's landed between the judge's read and
// its delete. Four cases, by what v says:
//
//   - v is the waiting form: no record had landed. Then lastOK = J. The
//     head's node did not exist before J, so it became the head after J;
//     the judge saw it at the head in a listing after that, and start is
//     the judge's first probe after the listing (in the present epoch): p
//     >= start + L > J + L > G.
//   - v says "held", written in this epoch: start is its mtime, stamped
//     after the write was sent at time s, and lastOK = s (a later write
//     would have moved the version). p >= mtime + L >= s + L > G.
//   - v says "held", written under an earlier leader: start is the judge's
//     first probe in this epoch. The holder's last landed write came
//     before it (it would carry this epoch's zxid otherwise), so lastOK
//     is earlier still, and p >= start + L > G.
//   - v says "held", written under a later leader than the probe's (the
//     probe was answered before a leader change, the read after it): no
//     start can be told, and the judge probes again.
//
// The comparisons of local with ZooKeeper time hold while the holder's
// clock and the leader's tick within 5% of each other over a lease, which
// is what the 0.95 is for. Lock returns without the record only while G
// - now > L/3; a contender that waited longer than that writes the record
// first and starts from its send time. Tests: a holder that renews is
// never evicted (TestRenewalKeepsSlowHolder), one that stops is
// (TestStoppedRenewalIsEvicted), one that stalls before its record only
// one lease after its create (TestUnstampedHolderIsEvictedOnlyAfterItsLease),
// one cut off before it gives up first
// (TestHolderCutOffBeforeItsRecordGivesUpFirst), a judge that was third
// when the head acquired still judges it (TestJudgeAfterAHandoff), and a
// judge whose probe answer was lost keeps its version straight
// (TestLostProbeAnswerDoesNotCostTheLock).
//
// # What a lease cannot do
//
// Eviction turns a paused holder into a stale holder. When the process
// resumes, it believes it holds the lock until it notices Done, and it may
// write to the shared resource in between. No timing rule closes that gap;
// a pause can come between any check and the write. Only the resource can
// refuse the write: it must remember the largest fencing token it has seen
// and reject smaller ones. Token is the czxid of the holder's node, so the
// evicted holder's token is smaller than its successor's. Like the
// sequential lock, Token keeps returning it until Unlock, so the stale
// holder presents its real, stale token and is refused.
//
// A lease costs writes. Each hold that lasts long enough for its record
// to go out takes one, and each holder makes one quorum write per lease/3
// while it holds the lock. Each of these also wakes the next in line: its
// watch on its predecessor (the holder) fires on every data change, so it
// gets one notification and re-reads the holder. No one else is woken.
// Measured against the leader's proposal counter (TestLeaseWriteCost,
// which accounts for every proposal: two per Lock call in the sequential
// lock, plus each write the lease logic sends) with a 3s lease, an
// uncontended acquire/release with no work under the lock takes 2.0
// quorum writes, as in the sequential lock: the release comes before the
// record goes out. With four contenders taking turns it was 2.02 (one
// record in 40 holds, no probe). With 900ms leases and 950ms holds, the
// record and three renewals a hold make it 5.75. The delete does not care
// that the record and the renewals moved the node's version on (the
// sequential lock deletes its own node by name, at any version), so
// releasing a renewed hold costs no extra write or read.
//
// The lease is the one cost of a hold that grows with the locks held on
// a session. Every other variant's hold waits on the session's one clock
// and sends nothing while it is idle; each lease is renewed by its own
// holder. Measured with the bench's hold-cost measurement, timeout among
// its -hold-variants, in a run of its own reported in docs/reliability.md
// (one session of 10s, a local three-member ensemble, 2 cores; the
// committed run in docs/results has no timeout rows): 1,000 timeout
// locks held with a 1s lease cost the servers 4,904 packets/s and the
// client 307ms of CPU per second, and at 10,000 held on one session the
// ensemble could not keep up and a lease lapsed.
//
//	go test -race -count=1 -v -run TestLeaseWriteCost ./timeout/
//
// # Operation log
//
// zklocks.WithLogger(l), passed to New, makes the Mutex log its operations
// to l, a *slog.Logger, to trace lock problems afterwards (docs/oplog.md).
// Without it, or with nil, nothing is built or allocated. Every record
// carries lock=timeout and path; the messages and keys are stable:
//
//	acquire  INFO   node token session waited
//	wait     DEBUG  node watch ahead session      (one per predecessor watched)
//	evict    WARN   node victim victim_token lease overdue
//	release  INFO   node token held [err]
//	lost     WARN   node token held reason err
//	abandon  INFO   [node] [token] waited err     (Lock, LockTimeout failed; not a TryLock that found the lock taken)
//
// evict is written by the contender that evicted a holder: victim is the
// holder's node, victim_token its token, lease its lease, and overdue how
// long past the lease ZooKeeper's clock was when it decided. The evicted
// holder logs lost with reason evicted (with a lease, any deletion of the
// holder's node is one, as ErrEvicted says), and lease_expired when it
// gave its hold up itself; other reasons are node_deleted,
// session_expired and cut_off. A lease that could not be stamped logs
// abandon. Acquire, wait, release and abandon are written as in the
// sequential lock, under this package's name; each event is written once. internal/oplog has the full table, shared by every
// variant.
package timeout
