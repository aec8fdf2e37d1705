package io.github.flurryid.flurry.client;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The Java client's figures: 64 threads taking IDs through one client from one
 * local flurry serve (IDs per second, the longest call, the longest time in which
 * no thread got an ID), then the same through a SIGKILL of the server in use of
 * two. Run with {@code clients/java/build.sh bench [rounds] [ids per round] [threads]}; each
 * line carries the load average, since the machine's other work moves every figure.
 */
public final class Bench {
    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        long total = args.length > 1 ? Long.parseLong(args[1]) : 3_000_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        try {
            Path leases = Harness.tempDir("bench-leases");
            Harness.Serve one = Harness.startServe(leases);
            try (FlurryClient c = FlurryClient.builder().servers(one.url).timeout(Duration.ofSeconds(30)).build()) {
                c.nextMany("default", 100_000); // the first requests, and the JIT, outside the figures
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    ServeTests.Taken[] got = ServeTests.take(c, "default", threads, total, null);
                    double secs = (System.nanoTime() - t0) / 1e9;
                    System.out.printf("one server, %d threads: %.2f M IDs/s; longest call %.1f ms; longest time no thread got an ID %.1f ms; load %s%n",
                        threads, total / secs / 1e6, ServeTests.maxWait(got) / 1e6, ServeTests.maxGap(got) / 1e6, ServeTests.load());
                }
            }
            for (int r = 0; r < rounds; r++) {
                Harness.Serve v1 = Harness.startServe(leases);
                Harness.Serve v2 = Harness.startServe(leases);
                try (FlurryClient c = FlurryClient.builder().servers(v1.url, v2.url).build()) {
                    c.nextMany("default", 100_000);
                    long t0 = System.nanoTime();
                    ServeTests.Taken[] got = ServeTests.take(c, "default", threads, total, () -> {
                        try {
                            (c.inUse().equals(v1.url) ? v1 : v2).signal("KILL");
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
                    double secs = (System.nanoTime() - t0) / 1e9;
                    System.out.printf("SIGKILL of the server in use, %d threads: %.2f M IDs/s; longest call %.1f ms; longest time no thread got an ID %.1f ms; load %s%n",
                        threads, total / secs / 1e6, ServeTests.maxWait(got) / 1e6, ServeTests.maxGap(got) / 1e6, ServeTests.load());
                }
                v1.signal("KILL");
                v2.signal("KILL");
            }
        } finally {
            Harness.cleanup();
        }
    }
}
