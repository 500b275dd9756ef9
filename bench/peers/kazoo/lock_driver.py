"""Runs contenders of kazoo's Lock on one lock path and prints each hold.

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

Each contender makes K acquisitions, unless --duration-ms (contenders stop
asking for the lock D ms after the start; a waiter already queued still
gets it once) or --acquisitions (A in all, shared by the contenders) says
otherwise. --round-robin connects contender i to the i-th server (modulo
their number) only, as the Go harness's sessions do. With --control the
harness drives the run: after "ready" the driver waits for a line "go" on
stdin, prints "finished <start-ns> <end-ns>" when the last contender is
done, and waits for another line (or the end of stdin) before it closes the
sessions, so that the harness can read the servers' counters in between.
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

    def __init__(self, args):
        self.args = args
        self.deadline = None
        self.tickets = args.acquisitions
        self.mu = threading.Lock()

    def start(self):
        if self.args.duration_ms > 0:
            self.deadline = time.monotonic() + self.args.duration_ms / 1000.0

    def again(self, done):
        if self.deadline is not None:
            return time.monotonic() < self.deadline
        if self.args.acquisitions > 0:
            with self.mu:
                self.tickets -= 1
                return self.tickets >= 0
        return done < self.args.holds


def contender(i, client, args, start, stop):
    patterns = [args.extra_lock_patterns] if args.extra_lock_patterns else []
    lock = client.Lock(args.path, "kazoo-%d" % i, extra_lock_patterns=patterns)
    start.wait()
    done = 0
    while stop.again(done):
        requested = time.time_ns()
        lock.acquire()
        acquired = time.time_ns()
        time.sleep(args.hold_ms / 1000.0)
        released = time.time_ns()
        lock.release()
        if args.requested:
            say("hold kazoo-%d %d %d %d" % (i, requested, acquired, released))
        else:
            say("hold kazoo-%d %d %d" % (i, acquired, released))
        done += 1
        if args.idle_ms > 0:
            time.sleep(args.idle_ms / 1000.0)


def guarded(i, client, args, start, stop):
    """contender, whose failure the harness (--control) reads as a line;
    without --control a failure ends the thread with its traceback on
    stderr, as it always did."""
    if not args.control:
        return contender(i, client, args, start, stop)
    try:
        contender(i, client, args, start, stop)
    except Exception as e:  # the harness fails the run on this line
        say("error kazoo-%d %r" % (i, e))


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
    def close(c):
        c.stop()
        c.close()
    threads = [threading.Thread(target=close, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


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
    args = p.parse_args()

    clients = connect(args)
    start = threading.Event()
    stop = Stop(args)
    threads = [threading.Thread(target=guarded, args=(i, c, args, start, stop))
               for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    say("ready")
    if args.control and sys.stdin.readline().strip() != "go":
        raise RuntimeError("kazoo: expected go on stdin")
    began = time.time_ns()
    stop.start()
    start.set()
    for t in threads:
        t.join()
    if args.control:
        say("finished %d %d" % (began, time.time_ns()))
        sys.stdin.readline()
    close_all(clients)
    say("done")


if __name__ == "__main__":
    main()
