import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Runs readers and writers of Curator's InterProcessReadWriteLock on one
 * lock path, each on a session of its own, and prints one line per hold
 * for the Go side (internal/interop):
 *
 * <pre>hold curator-r3 &lt;acquired-unix-ns&gt; &lt;released-unix-ns&gt;</pre>
 *
 * The contender's name says its kind: "-r" a reader, "-w" a writer. An
 * acquisition that takes longer than the timeout prints "stuck name" and
 * gives up that contender. "ready" comes once every session is up, "done"
 * at the end.
 *
 * Usage: RWLockDriver servers path readers writers holds holdMillis timeoutMillis
 */
public final class RWLockDriver {
    private static final Object OUT = new Object();

    private static void say(String line) {
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static long wallNanos() {
        java.time.Instant t = java.time.Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    public static void main(String[] args) throws Exception {
        String servers = args[0];
        String path = args[1];
        int readers = Integer.parseInt(args[2]);
        int writers = Integer.parseInt(args[3]);
        int holds = Integer.parseInt(args[4]);
        long holdMillis = Long.parseLong(args[5]);
        long timeoutMillis = Long.parseLong(args[6]);

        List<CuratorFramework> sessions = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int i = 0; i < readers + writers; i++) {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(servers)
                    .sessionTimeoutMs(10_000)
                    .retryPolicy(new ExponentialBackoffRetry(20, 5))
                    .build();
            c.start();
            if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("curator: no connection to " + servers);
            }
            sessions.add(c);
            boolean read = i < readers;
            String name = "curator-" + (read ? "r" : "w") + i;
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path);
            InterProcessMutex lock = read ? rw.readLock() : rw.writeLock();
            workers.add(new Thread(() -> run(name, lock, holds, holdMillis, timeoutMillis, go)));
        }
        for (Thread w : workers) {
            w.start();
        }
        say("ready");
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        for (CuratorFramework c : sessions) {
            c.close();
        }
        say("done");
    }

    private static void run(String name, InterProcessMutex lock, int holds, long holdMillis, long timeoutMillis,
            CountDownLatch go) {
        try {
            go.await();
            for (int k = 0; k < holds; k++) {
                if (!lock.acquire(timeoutMillis, TimeUnit.MILLISECONDS)) {
                    say("stuck " + name);
                    return;
                }
                long acquired = wallNanos();
                Thread.sleep(holdMillis);
                long released = wallNanos();
                lock.release();
                say("hold " + name + " " + acquired + " " + released);
            }
        } catch (Exception e) {
            say("error " + name + " " + e);
        }
    }
}
