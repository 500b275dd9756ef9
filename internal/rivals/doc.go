// Package rivals runs the locks that ZooKeeper's are compared with, each
// on its real server and with the client library its users use, so that
// the bench and the fault tests can set them beside the ZooKeeper locks
// on one machine:
//
//   - etcd: concurrency.Mutex of go.etcd.io/etcd/client/v3 over a
//     Session, against a three-member cluster (StartEtcd; Debian's etcd
//     3.4 binary, which the v3.7 client speaks to without trouble);
//   - Redis: SET NX PX with a random value and a check-and-delete script,
//     with github.com/redis/go-redis/v9, against one server (StartRedis);
//   - Redlock: github.com/go-redsync/redsync/v4 over five independent
//     servers (StartRedises);
//   - PostgreSQL: pg_advisory_lock (session) and pg_advisory_xact_lock
//     (transaction) with github.com/jackc/pgx/v5 (StartPostgres).
//
// Every lock is a Locker: Lock waits until held or its context ends,
// Unlock fails with ErrNotHeld when there is no hold to release (never
// taken, or lost: an expired TTL or lease), Token is the fencing token
// where the system offers one (etcd only; each type's comment says why
// the others have none), Close releases and disconnects. A Locker is one
// client with its own connections, used by one goroutine at a time.
//
// # Servers
//
// Servers are started like the ZooKeeper ensemble (internal/ensemble):
// on 127.0.0.1, on free ports, each with its own temporary directory
// (removed by Close), each in a process group of its own, and tied to
// this process by the parent-death signal on Linux, so none outlives a
// test binary that dies. No system service is used or needed; the
// project's install script installs the packages without starting theirs.
// Durability is what each system's users run:
//
//   - etcd: every entry fsynced to its WAL on a majority before it counts
//     (etcd's default, not configurable);
//   - Redis: appendonly yes, appendfsync everysec (an append-only file
//     fsynced once a second: a crash loses up to about a second of
//     writes), RDB snapshots off;
//   - PostgreSQL: the defaults, fsync on and synchronous_commit on
//     (initdb alone runs with --no-sync). Advisory locks are kept in
//     shared memory and write nothing; a restart forgets them all.
//
// PostgreSQL refuses to run as root: under root the server runs as the
// postgres system user (or nobody), which then owns its directory.
//
// The fault tests use Process's hooks on any one server: Pause and Resume
// (SIGSTOP and SIGCONT to its process group), Kill (SIGKILL) and Stop;
// Redis.Restart brings a killed Redis back on its port and directory, to
// read its append-only file as a crashed server does, and
// Postgres.Restart a killed PostgreSQL, which replays its WAL. A Redis started
// with RedisConfig.FakeClock runs under libfaketime, with glibc's
// allocator in front of Debian's jemalloc (the two cannot start together
// otherwise), and SetClockOffset moves its clock while it runs. The fault
// tests (faults_test.go) log one RIVALFAULT line per system and fault.
//
// A holder to freeze runs in a child process (StartHolder, RunHolder in
// the child), so that SIGSTOP stops all of its client, keep-alives
// included: the fault tests run this test binary again, zklocks demo
// pause runs zklocks again. A holder to cut off runs in the test's own
// process, its client dialling the servers through TCP proxies there
// (toxiproxy, as internal/ensemble uses it) that the test silences.
//
// # Measuring
//
// RunRound measures one round of N Lockers on one lock the way the
// ZooKeeper bench measures its locks (bench.RoundFigures: throughput,
// handoff and acquire latencies), checks that no two holds overlapped,
// and adds the largest share of acquisitions one contender took (Redis
// and Redlock waiters poll, so a releaser that asks again at once may
// take the lock straight back). Etcd.RaftIndex, Redis.AOFBytes and
// Postgres.WALBytes read what the servers have logged, so that a run can
// tell the durable writes one acquisition costs. zklocks rivals runs
// them all.
//
// # Failure modes
//
// A start that cannot find its program fails with an error wrapping
// ErrNotInstalled that names scripts/install-rivals.sh (make test runs
// it); a server that exits or does not answer while starting fails the
// start with the last lines of its log. Lock errors wrap the context's
// error when the context ended, so errors.Is(err,
// context.DeadlineExceeded) holds; after any Lock error nothing is left
// held (an attempt interrupted mid-request is undone with a fresh
// context of a few seconds).
//
// The package is internal: these locks are fixtures of the comparison,
// written as their own users write them, not locks this project offers.
package rivals
