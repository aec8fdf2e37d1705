package io.github.flurryid.flurry.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client's tests without a test framework (the JDK alone, so that they run
 * wherever javac does): each test is a named block with a time bound. A test
 * that throws fails, one that throws {@link Skip} is skipped with its reason, one
 * that outlives its bound fails. Exit status 0 only when none failed; with
 * FLURRY_TEST_REQUIRE=1 a skip fails too.
 *
 * <p>Arguments: class names of test suites (default: every suite), and
 * {@code -run REGEX} to run only the tests whose names match.
 */
public final class TestRunner {
    /** A test's body. */
    interface Body {
        void run() throws Exception;
    }

    /** Thrown by a test that cannot run here (a missing tool), with the reason. */
    static final class Skip extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Skip(String reason) {
            super(reason);
        }
    }

    private static final class Case {
        final String name;
        final long seconds;
        final Body body;

        Case(String name, long seconds, Body body) {
            this.name = name;
            this.seconds = seconds;
            this.body = body;
        }
    }

    private final List<Case> cases = new ArrayList<>();

    /** Adds a test bounded by seconds. */
    void test(String name, long seconds, Body body) {
        cases.add(new Case(name, seconds, body));
    }

    static boolean required() {
        return "1".equals(System.getenv("FLURRY_TEST_REQUIRE"));
    }

    public static void main(String[] args) throws Exception {
        String run = null;
        List<String> suites = new ArrayList<>();
        for (int k = 0; k < args.length; k++) {
            if (args[k].equals("-run") && k + 1 < args.length) {
                run = args[++k];
            } else {
                suites.add(args[k]);
            }
        }
        TestRunner r = new TestRunner();
        if (suites.isEmpty() || suites.contains("UnitTests")) {
            UnitTests.register(r);
        }
        if (suites.isEmpty() || suites.contains("ServeTests")) {
            ServeTests.register(r);
        }
        int failed = 0;
        int skipped = 0;
        int passed = 0;
        long t0 = System.nanoTime();
        for (Case c : r.cases) {
            if (run != null && !c.name.matches("(?s).*(" + run + ").*")) {
                continue;
            }
            Throwable[] err = new Throwable[1];
            Thread t = new Thread(() -> {
                try {
                    c.body.run();
                } catch (Throwable e) {
                    err[0] = e;
                }
            }, "test: " + c.name);
            t.setDaemon(true);
            long s0 = System.nanoTime();
            t.start();
            t.join(TimeUnit.SECONDS.toMillis(c.seconds));
            double secs = (System.nanoTime() - s0) / 1e9;
            if (t.isAlive()) {
                t.interrupt();
                failed++;
                System.out.printf("--- FAIL %s (did not end within %d s)%n", c.name, c.seconds);
                for (StackTraceElement e : t.getStackTrace()) {
                    System.out.println("        at " + e);
                }
                continue;
            }
            if (err[0] instanceof Skip) {
                skipped++;
                System.out.printf("--- SKIP %s: %s%n", c.name, err[0].getMessage());
                if (required()) {
                    failed++;
                    System.out.println("    FLURRY_TEST_REQUIRE=1 makes a skip a failure");
                }
            } else if (err[0] != null) {
                failed++;
                System.out.printf("--- FAIL %s (%.2f s)%n", c.name, secs);
                err[0].printStackTrace(System.out);
            } else {
                passed++;
                System.out.printf("--- ok   %s (%.2f s)%n", c.name, secs);
            }
        }
        try {
            Harness.cleanup();
        } catch (Exception e) {
            System.out.println("cleanup: " + e);
        }
        System.out.printf("java client: %d passed, %d failed, %d skipped in %.1f s%n", passed, failed, skipped,
            (System.nanoTime() - t0) / 1e9);
        System.exit(failed > 0 ? 1 : 0);
    }
}
