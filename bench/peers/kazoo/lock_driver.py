"""Runs contenders of kazoo's Lock (with --permits, of its Semaphore; with
--latch, of its Election) on one lock path and prints each hold.

One line per hold on stdout, for the Go harness to read:

    hold <contender> <acquired-unix-ns> <released-unix-ns>

or, with --requested, with the time the contender called acquire first:

    hold <contender> <requested-unix-ns> <acquired-unix-ns> <released-unix-ns>

Times are the wall clock of this machine (time.time_ns), the clock the Go
side reads with time.Now().UnixNano(): both run on one machine. Each
contender has a session of its own. "ready" is printed once every session
is up, "done" at the end.

Usage: lock_driver.py --servers H:P,... --path /lock --contenders N
       --holds K [--hold-ms MS] [--extra-lock-patterns -lock-]
       [--duration-ms D | --acquisitions A] [--idle-ms I]
       [--session-timeout S] [--requested] [--round-robin] [--control]
       [--warmup-ms W] [--hold-locks N] [--permits P | --latch] [--paths M]

Each contender makes K acquisitions, unless --duration-ms (contenders stop
asking for the lock D ms after the start; a waiter already queued still
gets it once) or --acquisitions (A in all, shared by the contenders) says
otherwise. --round-robin connects contender i to the i-th server (modulo
their number) only, as the Go harness's sessions do.

With --control the harness drives the runs, so that it can read the
servers' counters around each one while the sessions stay open: after
"ready" the driver reads commands on stdin, "go <path>" for a run on that
lock path (it prints the holds, then "finished <start-ns> <end-ns>" once the
last contender is done), and anything else, or the end of stdin, to close
the sessions and end. --warmup-ms W (with --control) has the contenders
contend for W ms on --path first, unreported, before "ready".

--hold-locks N is the hold mode, for the cost of holding locks idle: on
the first session, after "ready" and a "take" line on stdin, it acquires N
locks, one per path (--path/l0, --path/l1, ...), says "held", and after a
"release" line releases them and says "released".

--paths M is many locks at once: contender i takes the lock on
<path>/p<i mod M> instead of <path> (the harness makes the M paths).

--latch makes each hold a term of kazoo's Election, as the Curator
driver's --latch does with LeaderLatch: a contender runs for leader with
Election.run, and the function it runs as leader is the hold. kazoo's
Election is its Lock underneath, so it takes no --extra-lock-patterns.
"""

import argparse
import sys
import threading
import time

from kazoo.client import KazooClient

out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Stop:
    """Says when a contender asks for the lock no more."""

    def __init__(self, duration_ms, acquisitions, holds):
        self.duration_ms = duration_ms
        self.acquisitions = acquisitions
        self.holds = holds
        self.deadline = None
        self.tickets = acquisitions
        self.mu = threading.Lock()

    @staticmethod
    def of(args):
        return Stop(args.duration_ms, args.acquisitions, args.holds)

    def start(self):
        if self.duration_ms > 0:
            self.deadline = time.monotonic() + self.duration_ms / 1000.0

    def again(self, done):
        if self.deadline is not None:
            return time.monotonic() < self.deadline
        if self.acquisitions > 0:
            with self.mu:
                self.tickets -= 1
                return self.tickets >= 0
        return done < self.holds


def contender(i, client, args, path, start, stop, report):
    """One contender's loop; it prints each hold when report is set (not
    while warming up)."""
    patterns = [args.extra_lock_patterns] if args.extra_lock_patterns else []
    if args.permits > 0:
        # kazoo's Semaphore keeps its number of leases as the data of its
        # path, and fails on a path that exists without it (the harness
        # makes the lock path beforehand, empty).
        data, _ = client.get(path)
        if not data:
            client.set(path, str(args.permits).encode("utf-8"))
        lock = client.Semaphore(path, "kazoo-%d" % i, max_leases=args.permits)
    elif args.latch:
        election = client.Election(path, "kazoo-%d" % i)
    else:
        lock = client.Lock(path, "kazoo-%d" % i, extra_lock_patterns=patterns)
    start.wait()
    done = 0
    while stop.again(done):
        requested = time.time_ns()
        if args.latch:
            term = []

            def lead():
                term.append(time.time_ns())
                time.sleep(args.hold_ms / 1000.0)
                term.append(time.time_ns())

            election.run(lead)  # returns once the term is over
            acquired, released = term
        else:
            lock.acquire()
            acquired = time.time_ns()
            time.sleep(args.hold_ms / 1000.0)
            released = time.time_ns()
            lock.release()
        if report:
            times = (requested, acquired, released) if args.requested else (acquired, released)
            say("hold kazoo-%d %s" % (i, " ".join(str(t) for t in times)))
        done += 1
        if args.idle_ms > 0:
            time.sleep(args.idle_ms / 1000.0)


def guarded(i, client, args, *rest):
    """contender, whose failure the harness (--control) reads as a line;
    without --control a failure ends the thread with its traceback on
    stderr, as it always did."""
    if not args.control:
        return contender(i, client, args, *rest)
    try:
        contender(i, client, args, *rest)
    except Exception as e:  # the harness fails the run on this line
        say("error kazoo-%d %r" % (i, e))


def run(clients, args, path, stop, report):
    """One run: a contender per session on path until stop says so.
    Returns its start and end, in wall-clock nanoseconds."""
    start = threading.Event()
    def path_of(i):
        return "%s/p%d" % (path, i % args.paths) if args.paths > 0 else path
    threads = [threading.Thread(target=guarded, args=(i, c, args, path_of(i), start, stop, report))
               for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    if not args.control:
        say("ready")
    began = time.time_ns()
    stop.start()
    start.set()
    for t in threads:
        t.join()
    return began, time.time_ns()


def connect(args):
    """Opens one session per contender, all at once."""
    servers = args.servers.split(",")
    clients = []
    for i in range(args.contenders):
        hosts = servers[i % len(servers)] if args.round_robin else args.servers
        clients.append(KazooClient(hosts=hosts, timeout=args.session_timeout))
    events = [c.start_async() for c in clients]
    for c, ev in zip(clients, events):
        ev.wait(timeout=15)
        if not c.connected:
            raise RuntimeError("kazoo: no connection to %s" % args.servers)
    return clients


def close_all(clients):
    """Closes the sessions in parallel: each close waits for its
    closeSession, a quorum write."""
    n = len(clients)
    closed = [0]
    lock = threading.Lock()
    say("closing %d" % n)

    def close(c):
        c.stop()
        c.close()
        with lock:  # said as each close returns: the caller waits while these come
            closed[0] += 1
            say("closed %d of %d" % (closed[0], n))
    threads = [threading.Thread(target=close, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def hold_idle(client, args):
    """The hold mode (--hold-locks): see the module's doc."""
    locks = [client.Lock("%s/l%d" % (args.path, i)) for i in range(args.hold_locks)]
    say("ready")
    if sys.stdin.readline().strip() != "take":
        return
    for lock in locks:
        lock.acquire()
    say("held")
    sys.stdin.readline()  # "release", or the end of stdin
    for lock in locks:
        lock.release()
    say("released")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--servers", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--contenders", type=int, default=2)
    p.add_argument("--holds", type=int, default=50)
    p.add_argument("--hold-ms", type=float, default=1.0)
    p.add_argument("--session-timeout", type=float, default=10.0)
    p.add_argument("--extra-lock-patterns", default="")
    p.add_argument("--duration-ms", type=float, default=0)
    p.add_argument("--acquisitions", type=int, default=0)
    p.add_argument("--idle-ms", type=float, default=0)
    p.add_argument("--requested", action="store_true")
    p.add_argument("--round-robin", action="store_true")
    p.add_argument("--control", action="store_true")
    p.add_argument("--warmup-ms", type=float, default=0)
    p.add_argument("--hold-locks", type=int, default=-1)
    p.add_argument("--permits", type=int, default=0,
                   help="take permits of kazoo's Semaphore with this many leases instead of the Lock")
    p.add_argument("--paths", type=int, default=0,
                   help="contender i takes the lock on <path>/p<i mod M> (many locks at once)")
    p.add_argument("--latch", action="store_true",
                   help="each hold is a term of kazoo's Election instead of a hold of the Lock")
    args = p.parse_args()
    if args.latch and (args.permits > 0 or args.extra_lock_patterns):
        p.error("--latch takes neither --permits nor --extra-lock-patterns: kazoo's Election has no such option")

    clients = connect(args)
    if args.hold_locks >= 0:
        hold_idle(clients[0], args)
    elif not args.control:
        run(clients, args, args.path, Stop.of(args), True)
    else:
        if args.warmup_ms > 0:
            run(clients, args, args.path, Stop(args.warmup_ms, 0, 0), False)
        say("ready")
        while True:
            line = sys.stdin.readline()
            if not line.startswith("go "):
                break
            began, ended = run(clients, args, line[3:].strip(), Stop.of(args), True)
            say("finished %d %d" % (began, ended))
    close_all(clients)
    say("done")


if __name__ == "__main__":
    main()
