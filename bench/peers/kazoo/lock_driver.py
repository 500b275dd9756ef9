"""Runs contenders of kazoo's Lock on one lock path and prints each hold.

One line per hold on stdout, for the Go harness to read:

    hold <contender> <acquired-unix-ns> <released-unix-ns>

Times are the wall clock of this machine (time.time_ns), the clock the Go
side reads with time.Now().UnixNano(): both run on one machine. Each
contender has a session of its own. "ready" is printed once every session
is up, "done" at the end.

Usage: lock_driver.py --servers H:P,... --path /lock --contenders N
       --holds K [--hold-ms MS] [--extra-lock-patterns -lock-]
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


def contender(i, client, args, start):
    patterns = [args.extra_lock_patterns] if args.extra_lock_patterns else []
    lock = client.Lock(args.path, "kazoo-%d" % i, extra_lock_patterns=patterns)
    start.wait()
    for _ in range(args.holds):
        lock.acquire()
        acquired = time.time_ns()
        time.sleep(args.hold_ms / 1000.0)
        released = time.time_ns()
        lock.release()
        say("hold kazoo-%d %d %d" % (i, acquired, released))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--servers", required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--contenders", type=int, default=2)
    p.add_argument("--holds", type=int, default=50)
    p.add_argument("--hold-ms", type=float, default=1.0)
    p.add_argument("--session-timeout", type=float, default=10.0)
    p.add_argument("--extra-lock-patterns", default="")
    args = p.parse_args()

    clients = []
    for _ in range(args.contenders):
        c = KazooClient(hosts=args.servers, timeout=args.session_timeout)
        c.start(timeout=15)
        clients.append(c)
    start = threading.Event()
    threads = [threading.Thread(target=contender, args=(i, c, args, start))
               for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    say("ready")
    start.set()
    for t in threads:
        t.join()
    for c in clients:
        c.stop()
        c.close()
    say("done")


if __name__ == "__main__":
    main()
