"""Runs readers and writers of kazoo's ReadLock and WriteLock on one lock
path, each on a session of its own, and prints one line per hold for the
Go side (internal/interop):

    hold kazoo-r3 <acquired-unix-ns> <released-unix-ns>

The contender's name says its kind: "-r" a reader, "-w" a writer. An
acquisition that takes longer than --timeout-s prints "stuck <name>" and
gives up that contender (kazoo 2.8's reader can wait for a writer behind
it for ever: kazoo #649). "ready" comes once every session is up, "done"
at the end.

--reader-patterns and --writer-patterns are kazoo's extra_lock_patterns
for each kind (comma-separated; "=" form, since a pattern may start with
"-").
"""

import argparse
import sys
import threading
import time

from kazoo.client import KazooClient

printing = threading.Lock()


def say(line):
    with printing:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def patterns(text):
    return [p for p in text.split(",") if p]


def run(name, lock, args, go):
    go.wait()
    for _ in range(args.holds):
        if not lock.acquire(timeout=args.timeout_s):
            say("stuck " + name)
            return
        acquired = time.time_ns()
        time.sleep(args.hold_ms / 1000.0)
        released = time.time_ns()
        lock.release()
        say("hold %s %d %d" % (name, acquired, released))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--servers", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--readers", type=int, default=2)
    p.add_argument("--writers", type=int, default=1)
    p.add_argument("--holds", type=int, default=50)
    p.add_argument("--hold-ms", type=float, default=1.0)
    p.add_argument("--timeout-s", type=float, default=10.0)
    p.add_argument("--reader-patterns", default="")
    p.add_argument("--writer-patterns", default="")
    args = p.parse_args()

    sessions, workers = [], []
    go = threading.Event()
    for i in range(args.readers + args.writers):
        c = KazooClient(hosts=args.servers, timeout=10.0)
        c.start(timeout=15)
        sessions.append(c)
        if i < args.readers:
            name = "kazoo-r%d" % i
            lock = c.ReadLock(args.path, name, extra_lock_patterns=patterns(args.reader_patterns))
        else:
            name = "kazoo-w%d" % i
            lock = c.WriteLock(args.path, name, extra_lock_patterns=patterns(args.writer_patterns))
        workers.append(threading.Thread(target=run, args=(name, lock, args, go)))
    for w in workers:
        w.start()
    say("ready")
    go.set()
    for w in workers:
        w.join()
    for c in sessions:
        c.stop()
        c.close()
    say("done")


if __name__ == "__main__":
    main()
