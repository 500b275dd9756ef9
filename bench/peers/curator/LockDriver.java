import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Runs contenders of Curator's InterProcessMutex on one lock path and
 * prints each hold, one line per hold on stdout for the Go harness:
 *
 * <pre>hold &lt;contender&gt; &lt;acquired-unix-ns&gt; &lt;released-unix-ns&gt;</pre>
 *
 * or, with --requested, with the time the contender called acquire first:
 *
 * <pre>hold &lt;contender&gt; &lt;requested-unix-ns&gt; &lt;acquired-unix-ns&gt; &lt;released-unix-ns&gt;</pre>
 *
 * Times are this machine's wall clock in nanoseconds (the Go side reads
 * the same clock). Each contender has a session of its own; "ready" is
 * printed once they are all connected, "done" at the end.
 *
 * <p>Usage: LockDriver servers path contenders holds holdMillis [options]
 *
 * <p>Each contender makes holds acquisitions, unless one of these says
 * otherwise:
 *
 * <ul>
 *   <li>--duration-ms D: contenders stop asking for the lock D ms after
 *       the start (a waiter already queued still gets it once);
 *   <li>--acquisitions A: A acquisitions in all, shared by the contenders;
 * </ul>
 *
 * and the other knobs of the Go harness (zklocks bench):
 *
 * <ul>
 *   <li>--idle-ms I: time a contender waits after a release;
 *   <li>--session-timeout-ms S (default 10000);
 *   <li>--round-robin: contender i connects to the i-th server (modulo
 *       their number) only, as the Go harness's sessions do;
 *   <li>--control: the harness drives the runs, so that it can read the
 *       servers' counters around each one while the sessions stay open:
 *       after "ready" the driver reads commands on stdin, "go &lt;path&gt;"
 *       for a run on that lock path (it prints the holds, then "finished
 *       &lt;start-ns&gt; &lt;end-ns&gt;" once the last contender is done), and
 *       anything else, or the end of stdin, to close the sessions and end;
 *   <li>--warmup-ms W: with --control, the contenders first contend for W
 *       ms on the path of the command line, unreported, before "ready": a
 *       fresh JVM runs Curator interpreted, several times slower than once
 *       its JIT has compiled the hot paths, which a long-running program
 *       has long done;
 *   <li>--permits P: the contenders take permits of Curator's
 *       InterProcessSemaphoreV2 with P leases instead of the mutex (up to
 *       P holds at once);
 *   <li>--multi K: the contenders take K locks at once with Curator's
 *       InterProcessMultiLock, on path/l0 ... path/l(K-1);
 *   <li>--paths M: many locks at once: contender i takes the lock on
 *       path/p(i mod M) instead of path (the harness makes the M paths);
 *   <li>--latch: each hold is a term of Curator's LeaderLatch on path: a
 *       new latch started and awaited, then closed;
 *   <li>--hold-locks N: hold mode, for the cost of holding locks idle: on
 *       the first session, after "ready" and a "take" line on stdin, it
 *       acquires N locks, one per path (path/l0, path/l1, ...), says
 *       "held", and after a "release" line releases them and says
 *       "released".
 * </ul>
 */
public final class LockDriver {
    private static final Object OUT = new Object();

    private static void say(String line) {
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /** This machine's wall clock, in nanoseconds since the epoch. */
    private static long nowNanos() {
        java.time.Instant t = java.time.Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** The command line: five positional arguments, then options. */
    private static final class Options {
        String servers;
        String path;
        int contenders;
        int holds;
        double holdMillis;
        long durationMillis;
        long acquisitions;
        double idleMillis;
        long warmupMillis;
        int sessionTimeoutMillis = 10_000;
        boolean requested;
        boolean control;
        boolean roundRobin;
        int holdLocks = -1;
        int permits;
        int multi;
        int paths;
        boolean latch;

        static Options parse(String[] args) {
            Options o = new Options();
            o.servers = args[0];
            o.path = args[1];
            o.contenders = Integer.parseInt(args[2]);
            o.holds = Integer.parseInt(args[3]);
            o.holdMillis = Double.parseDouble(args[4]);
            for (int i = 5; i < args.length; i++) {
                switch (args[i]) {
                    case "--duration-ms" -> o.durationMillis = Long.parseLong(args[++i]);
                    case "--acquisitions" -> o.acquisitions = Long.parseLong(args[++i]);
                    case "--idle-ms" -> o.idleMillis = Double.parseDouble(args[++i]);
                    case "--warmup-ms" -> o.warmupMillis = Long.parseLong(args[++i]);
                    case "--session-timeout-ms" -> o.sessionTimeoutMillis = Integer.parseInt(args[++i]);
                    case "--requested" -> o.requested = true;
                    case "--control" -> o.control = true;
                    case "--round-robin" -> o.roundRobin = true;
                    case "--hold-locks" -> o.holdLocks = Integer.parseInt(args[++i]);
                    case "--permits" -> o.permits = Integer.parseInt(args[++i]);
                    case "--multi" -> o.multi = Integer.parseInt(args[++i]);
                    case "--latch" -> o.latch = true;
                    case "--paths" -> o.paths = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return o;
        }

        /** The servers contender i connects to. */
        String serversOf(int i) {
            if (!roundRobin) {
                return servers;
            }
            String[] all = servers.split(",");
            return all[i % all.length];
        }
    }

    private static void sleepMillis(double ms) throws InterruptedException {
        if (ms > 0) {
            long ns = (long) (ms * 1_000_000);
            Thread.sleep(ns / 1_000_000, (int) (ns % 1_000_000));
        }
    }

    /** Says when a contender asks for the lock no more. */
    private static final class Stop {
        private final long durationMillis;
        private final int holds;
        private final long acquisitions;
        private final AtomicLong tickets;
        private volatile long deadline;

        Stop(long durationMillis, long acquisitions, int holds) {
            this.durationMillis = durationMillis;
            this.acquisitions = acquisitions;
            this.holds = holds;
            this.tickets = new AtomicLong(acquisitions);
        }

        static Stop of(Options o) {
            return new Stop(o.durationMillis, o.acquisitions, o.holds);
        }

        void start() {
            if (durationMillis > 0) {
                deadline = System.nanoTime() + durationMillis * 1_000_000;
            }
        }

        boolean again(int done) {
            if (durationMillis > 0) {
                return System.nanoTime() < deadline;
            }
            if (acquisitions > 0) {
                return tickets.decrementAndGet() >= 0;
            }
            return done < holds;
        }
    }

    /** Gives back what an Acquire took. */
    @FunctionalInterface
    private interface Release {
        void release() throws Exception;
    }

    /** Takes the lock, or a permit, for one hold. */
    @FunctionalInterface
    private interface Acquire {
        Release acquire() throws Exception;
    }

    /** A contender's lock on path: the mutex, a permit of the semaphore (--permits), K locks (--multi), or a leader's term (--latch). */
    private static Acquire lockOf(CuratorFramework c, String path, Options o) {
        if (o.permits > 0) {
            InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(c, path, o.permits);
            return () -> {
                Lease lease = s.acquire();
                return () -> s.returnLease(lease);
            };
        }
        if (o.latch) {
            return () -> {
                LeaderLatch term = new LeaderLatch(c, path);
                term.start();
                term.await();
                return term::close;
            };
        }
        if (o.multi > 0) {
            List<String> paths = new ArrayList<>();
            for (int i = 0; i < o.multi; i++) {
                paths.add(path + "/l" + i);
            }
            InterProcessMultiLock all = new InterProcessMultiLock(c, paths);
            return () -> {
                all.acquire();
                return all::release;
            };
        }
        InterProcessMutex m = new InterProcessMutex(c, path);
        return () -> {
            m.acquire();
            return m::release;
        };
    }

    /** One contender's loop; it prints each hold when report is set (not while warming up). */
    private static void contend(int id, Acquire lock, Options o, Stop stop, boolean report) throws Exception {
        for (int k = 0; stop.again(k); k++) {
            long requested = nowNanos();
            Release held = lock.acquire();
            long acquired = nowNanos();
            sleepMillis(o.holdMillis);
            long released = nowNanos();
            held.release();
            if (report) {
                say("hold curator-" + id + (o.requested ? " " + requested : "") + " " + acquired + " " + released);
            }
            sleepMillis(o.idleMillis);
        }
    }

    /** Opens one session per contender, all at once. */
    private static List<CuratorFramework> connect(Options o) throws InterruptedException {
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < o.contenders; i++) {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(o.serversOf(i))
                    .sessionTimeoutMs(o.sessionTimeoutMillis)
                    .retryPolicy(new ExponentialBackoffRetry(20, 5))
                    .build();
            c.start();
            clients.add(c);
        }
        for (CuratorFramework c : clients) {
            if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("curator: no connection to " + o.servers);
            }
        }
        return clients;
    }

    /** Closes the sessions in parallel: each close waits for its closeSession, a quorum write. */
    private static void closeAll(List<CuratorFramework> clients) throws InterruptedException {
        int n = clients.size();
        AtomicLong closed = new AtomicLong();
        say("closing " + n);
        List<Thread> threads = new ArrayList<>();
        for (CuratorFramework c : clients) {
            Thread t = new Thread(() -> {
                c.close();
                // Said as each close returns, in any order: the caller waits while these come.
                say("closed " + closed.incrementAndGet() + " of " + n);
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /**
     * One run: a contender per session on path until stop says so.
     * Returns its start and end, in wall-clock nanoseconds.
     */
    private static long[] run(List<CuratorFramework> clients, String path, Options o, Stop stop, boolean report)
            throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
            final int id = i;
            final Acquire lock = lockOf(clients.get(i), o.paths > 0 ? path + "/p" + (i % o.paths) : path, o);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    contend(id, lock, o, stop, report);
                } catch (Exception e) {
                    say("error curator-" + id + " " + e);
                }
            });
            t.start();
            threads.add(t);
        }
        if (!o.control) {
            say("ready");
        }
        long began = nowNanos();
        stop.start();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        return new long[] {began, nowNanos()};
    }

    /** Hold mode (--hold-locks): see the class comment. */
    private static void holdIdle(CuratorFramework c, Options o) throws Exception {
        List<InterProcessMutex> locks = new ArrayList<>();
        for (int i = 0; i < o.holdLocks; i++) {
            locks.add(new InterProcessMutex(c, o.path + "/l" + i));
        }
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
        say("ready");
        if (!"take".equals(stdin.readLine())) {
            return;
        }
        for (InterProcessMutex l : locks) {
            l.acquire();
        }
        say("held");
        stdin.readLine(); // "release", or the end of stdin
        for (InterProcessMutex l : locks) {
            l.release();
        }
        say("released");
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        List<CuratorFramework> clients = connect(o);
        if (o.holdLocks >= 0) {
            holdIdle(clients.get(0), o);
        } else if (!o.control) {
            run(clients, o.path, o, Stop.of(o), true);
        } else {
            if (o.warmupMillis > 0) {
                run(clients, o.path, o, new Stop(o.warmupMillis, 0, 0), false);
            }
            say("ready");
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
            for (String line; (line = stdin.readLine()) != null && line.startsWith("go ");) {
                long[] t = run(clients, line.substring(3), o, Stop.of(o), true);
                say("finished " + t[0] + " " + t[1]);
            }
        }
        closeAll(clients);
        say("done");
    }
}
