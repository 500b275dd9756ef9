// Package rivals runs the locks that ZooKeeper's are compared with, each
// on its real server and with the client library its users use, so that
// the bench and the fault tests can set them beside the ZooKeeper locks
// on one machine (docs/06-comparison.md, "The rivals, measured here"):
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
// Every lock is a Locker, one client used by one goroutine at a time:
// Token is the fencing token where the system offers one (etcd only; each
// type's comment says why the others have none), and Unlock fails with
// ErrNotHeld when there is no hold to release (never taken, or lost).
//
// # Servers
//
// Servers start like the ZooKeeper ensemble (internal/ensemble): on
// 127.0.0.1, on free ports, each with its own temporary directory
// (removed by Close), each in a process group of its own, and tied to
// this process by the parent-death signal on Linux, so none outlives a
// test binary that dies. No system service is used or needed. Each
// system runs with the durability its users run (the Etcd, Redis and
// Postgres types say which; docs/results/rivals.md lists them).
//
// The fault tests act on one server through Process (Pause, Resume,
// Kill, Stop), bring a killed Redis or PostgreSQL back with Restart, and
// move a Redis clock with RedisConfig.FakeClock and SetClockOffset; they
// log one RIVALFAULT line per system and fault. A holder to freeze runs
// in a child process (StartHolder, RunHolder in the child), so that
// SIGSTOP stops all of its client, keep-alives included; a holder to cut
// off runs in the test's own process, dialling the servers through TCP
// proxies there (toxiproxy, as internal/ensemble uses it).
//
// # Measuring
//
// RunRound measures one round of N Lockers on one lock the way the
// ZooKeeper bench measures its locks (bench.RoundFigures), checks that no
// two holds overlapped, and adds the largest share of acquisitions one
// contender took (Redis and Redlock waiters poll). Etcd.RaftIndex,
// Redis.AOFBytes and Postgres.WALBytes read what the servers have logged,
// the durable writes an acquisition costs. zklocks rivals runs them all.
//
// # Failure modes
//
// A start that cannot find its program fails with an error wrapping
// ErrNotInstalled, which names scripts/install-rivals.sh; a server that
// exits or does not answer while starting fails the start with the last
// lines of its log. A Lock whose context ended wraps the context's error,
// and after any Lock error nothing is left held: an attempt cut short
// mid-request is undone with a fresh context of a few seconds.
//
// The package is internal: these locks are fixtures of the comparison,
// written as their own users write them, not locks this project offers.
package rivals
