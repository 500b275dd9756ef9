import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Runs contenders of Curator's InterProcessMutex on one lock path and
 * prints each hold, one line per hold on stdout for the Go harness:
 *
 * <pre>hold &lt;contender&gt; &lt;acquired-unix-ns&gt; &lt;released-unix-ns&gt;</pre>
 *
 * Times are this machine's wall clock in nanoseconds (the Go side reads
 * the same clock). Each contender has a session of its own; "ready" is
 * printed once they are all connected, "done" at the end.
 *
 * Usage: LockDriver servers path contenders holds holdMillis
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

    public static void main(String[] args) throws Exception {
        String servers = args[0];
        String path = args[1];
        int contenders = Integer.parseInt(args[2]);
        int holds = Integer.parseInt(args[3]);
        long holdMillis = Long.parseLong(args[4]);

        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(servers)
                    .sessionTimeoutMs(10_000)
                    .retryPolicy(new ExponentialBackoffRetry(20, 5))
                    .build();
            c.start();
            if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("curator: no connection to " + servers);
            }
            clients.add(c);
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            final int id = i;
            final InterProcessMutex lock = new InterProcessMutex(clients.get(i), path);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int k = 0; k < holds; k++) {
                        lock.acquire();
                        long acquired = nowNanos();
                        Thread.sleep(holdMillis);
                        long released = nowNanos();
                        lock.release();
                        say("hold curator-" + id + " " + acquired + " " + released);
                    }
                } catch (Exception e) {
                    say("error curator-" + id + " " + e);
                }
            });
            t.start();
            threads.add(t);
        }
        say("ready");
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
        say("done");
    }
}
