package io.github.flurryid.flurry.client;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The client against real flurry serve processes: uniqueness and order under 64
 * threads, failover when a server is killed, hedging around a stopped server and a
 * listener that never answers, the timeouts, the typed exceptions, the layout,
 * and the refusal to mix servers that can issue the same IDs. Every test is
 * bounded in time, and the runner's cleanup stops every process started here.
 */
@SuppressWarnings("unchecked")
final class ServeTests {
    private ServeTests() {
    }

    private static Path leaseDir;
    private static Harness.Serve a;
    private static Harness.Serve b;
    private static final List<FlurryClient> CLIENTS = new ArrayList<>();

    /** Starts the two shared servers once (leasing from one directory: their IDs never collide). */
    private static synchronized void up() throws Exception {
        Harness.flurry();
        if (a == null) {
            leaseDir = Harness.tempDir("leases");
            a = Harness.startServe(leaseDir);
            b = Harness.startServe(leaseDir);
            Harness.onCleanup(() -> {
                for (FlurryClient c : CLIENTS) {
                    c.close();
                }
            });
        }
    }

    /** A client closed by the cleanup, so that no test leaves requests running. */
    private static synchronized FlurryClient client(FlurryClient.Builder bld) {
        FlurryClient c = bld.build();
        CLIENTS.add(c);
        return c;
    }

    /** A thread's IDs, grown as needed. */
    static final class Taken {
        long[] ids = new long[1024];
        int n;
        long maxWaitNanos;
        /** The longest time before one of its IDs in which no thread was handed one. */
        long maxGapNanos;

        void add(long id) {
            if (n == ids.length) {
                ids = Arrays.copyOf(ids, n * 2);
            }
            ids[n++] = id;
        }
    }

    /** How many IDs occur more than once across the threads. */
    private static long duplicates(Taken[] got) {
        int total = 0;
        for (Taken t : got) {
            total += t.n;
        }
        long[] all = new long[total];
        int k = 0;
        for (Taken t : got) {
            System.arraycopy(t.ids, 0, all, k, t.n);
            k += t.n;
        }
        Arrays.sort(all);
        long dups = 0;
        for (int i = 1; i < all.length; i++) {
            if (all[i] == all[i - 1]) {
                dups++;
            }
        }
        return dups;
    }

    /**
     * Runs threads that take IDs of namespace until total are taken in all, each
     * timing its longest call; atHalf runs once when a third are taken.
     */
    static Taken[] take(FlurryClient c, String namespace, int threads, long total, Runnable atThird) throws Exception {
        Taken[] got = new Taken[threads];
        AtomicLong taken = new AtomicLong();
        AtomicBoolean fired = new AtomicBoolean();
        AtomicReference<Throwable> err = new AtomicReference<>();
        AtomicLong lastOut = new AtomicLong(System.nanoTime());
        List<Thread> ts = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int w = 0; w < threads; w++) {
            Taken mine = new Taken();
            got[w] = mine;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    while (taken.getAndIncrement() < total) {
                        long t0 = System.nanoTime();
                        long id = c.next(namespace);
                        long now = System.nanoTime();
                        long d = now - t0;
                        if (d > mine.maxWaitNanos) {
                            mine.maxWaitNanos = d;
                        }
                        long gap = now - lastOut.getAndSet(now);
                        if (gap > mine.maxGapNanos) {
                            mine.maxGapNanos = gap;
                        }
                        mine.add(id);
                        if (atThird != null && taken.get() >= total / 3 && fired.compareAndSet(false, true)) {
                            atThird.run();
                        }
                    }
                } catch (Throwable e) {
                    err.compareAndSet(null, e);
                }
            }, "taker-" + w);
            ts.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : ts) {
            t.join();
        }
        if (err.get() != null) {
            throw new AssertionError("a caller failed: " + err.get(), err.get());
        }
        return got;
    }

    static long maxWait(Taken[] got) {
        long m = 0;
        for (Taken t : got) {
            m = Math.max(m, t.maxWaitNanos);
        }
        return m;
    }

    static long maxGap(Taken[] got) {
        long m = 0;
        for (Taken t : got) {
            m = Math.max(m, t.maxGapNanos);
        }
        return m;
    }

    static String load() {
        try {
            return new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/loadavg"))).trim();
        } catch (Exception e) {
            return "unknown";
        }
    }

    /** Layouts given by their fields, beside the presets. */
    private static final String[] CUSTOM = {
        "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16",
        "time:30:10ms:1700000000000,dc:3,rack:4,host:8,seq:10",
        "time:43:1ms:1970-01-01T00:00:00Z,seq:20",
        "time:20:1m30s:2020-02-29T12:00:00.001Z,a:2,b:3,c:4,d:5,e:6,f:7,g:8,h:1,seq:6",
        "time:41:1ms:2025-01-01T08:00:00+08:00,worker:6,seq:16",
    };

    static void register(TestRunner r) {
        r.test("the presets are flurry's: same names, same text forms, same widths", 120, () -> {
            List<Object> facts = (List<Object>) Json.parse(Harness.run("layouts", "--json"));
            List<String> names = new ArrayList<>();
            for (Object f : facts) {
                Map<String, Object> m = Json.obj(f);
                String name = Json.str(m, "name");
                names.add(name);
                Layout l = Layout.parse(name);
                Check.eq(Json.str(m, "layout"), l.toString(), "preset " + name);
                Check.eq(Long.parseLong(((Json.Num) m.get("bits")).text), (long) l.bits(), "bits of " + name);
                Check.eq(name, l.name(), "name");
                Check.eq(Json.str(m, "layout"), Layout.parse(Json.str(m, "layout")).toString(), "text form of " + name);
            }
            names.sort(null);
            Check.eq(Layout.presetNames(), names, "the presets");
        });

        r.test("decode equals flurry decode, on random IDs of every preset and of text forms", 120, () -> {
            java.util.Random rnd = new java.security.SecureRandom();
            List<String> specs = new ArrayList<>(Layout.presetNames());
            specs.addAll(Arrays.asList(CUSTOM));
            for (String spec : specs) {
                Layout l = Layout.parse(spec);
                long mask = l.bits() == 63 ? Long.MAX_VALUE : (1L << l.bits()) - 1;
                List<String> args = new ArrayList<>(Arrays.asList("decode", "--layout", spec));
                long[] ids = new long[203];
                ids[0] = 0;
                ids[1] = 1;
                ids[2] = mask;
                for (int i = 3; i < ids.length; i++) {
                    ids[i] = rnd.nextLong() & mask;
                }
                for (long id : ids) {
                    args.add(Long.toString(id));
                }
                String[] lines = Harness.run(args.toArray(new String[0])).trim().split("\n");
                Check.eq(ids.length, lines.length, spec + ": lines");
                for (int i = 0; i < ids.length; i++) {
                    Map<String, Object> want = Json.obj(Json.parse(lines[i]));
                    Layout.Parts got = l.decode(ids[i]);
                    Check.eq(Json.str(want, "id"), Long.toString(got.id()), spec + ": id");
                    Check.eq(java.time.Instant.parse(Json.str(want, "time")), got.time(), spec + ": time of " + got.id());
                    Check.eq(Json.int64(want, "unix_ms"), got.time().toEpochMilli(), spec + ": unix_ms of " + got.id());
                    Check.eq(Json.int64(want, "sequence"), got.sequence(), spec + ": sequence of " + got.id());
                    Check.eq(Info.named(want, "fields"), got.fields(), spec + ": fields of " + got.id());
                }
            }
        });

        r.test("1,000,000 IDs to 64 threads from one server: none twice, each thread's increasing", 300, () -> {
            up();
            FlurryClient c = client(FlurryClient.builder().servers(a.url).timeout(Duration.ofSeconds(30)));
            c.next("default"); // the first request, and the JIT, outside the measurement
            long total = 1_000_000;
            long t0 = System.nanoTime();
            Taken[] got = take(c, "default", 64, total, null);
            double secs = (System.nanoTime() - t0) / 1e9;
            long n = 0;
            for (int w = 0; w < got.length; w++) {
                n += got[w].n;
                for (int i = 1; i < got[w].n; i++) {
                    // One server node issues increasing IDs and the buffer hands them
                    // out in the order received: what one thread took increases.
                    Check.ok(got[w].ids[i] > got[w].ids[i - 1], "thread " + w + "'s IDs do not increase at " + i);
                }
            }
            Check.eq(total, n, "IDs taken");
            Check.eq(0L, duplicates(got), "IDs handed out twice");
            ServerStats st = c.stats().get(0);
            Check.eq(0L, st.failures(), "failures (" + st.lastError() + ")");
            System.out.printf("    %d IDs in %.2f s: %.2f M IDs/s through %d requests; longest call %.1f ms, longest time no thread got an ID %.1f ms; load %s%n",
                total, secs, total / secs / 1e6, st.requests(), maxWait(got) / 1e6, maxGap(got) / 1e6, load());
        });

        r.test("failover: the server in use SIGKILLed under 64 threads, 1,000,000 IDs, none twice, each node's increasing per thread", 300, () -> {
            up();
            Harness.Serve v1 = Harness.startServe(leaseDir);
            Harness.Serve v2 = Harness.startServe(leaseDir);
            FlurryClient c = client(FlurryClient.builder().servers(v1.url, v2.url));
            Layout layout = c.layout("default");
            Check.ok(layout != null, "default has a layout");
            long total = 1_000_000;
            AtomicLong killedAt = new AtomicLong();
            AtomicReference<String> killed = new AtomicReference<>();
            Taken[] got = take(c, "default", 64, total, () -> {
                Harness.Serve victim = c.inUse().equals(v1.url) ? v1 : v2;
                try {
                    victim.signal("KILL");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                killed.set(victim.url);
                killedAt.set(System.nanoTime());
            });
            Check.ok(killedAt.get() != 0, "the server was never killed");
            Check.eq(0L, duplicates(got), "IDs handed out twice");
            Map<Long, Integer> perNode = new HashMap<>();
            for (int w = 0; w < got.length; w++) {
                // Across servers IDs are only trend-increasing; from one server node,
                // what one thread took increases.
                Map<Long, Long> lastOf = new HashMap<>();
                for (int i = 0; i < got[w].n; i++) {
                    long id = got[w].ids[i];
                    long node = layout.decode(id).fields().get(0).value();
                    Long prev = lastOf.put(node, id);
                    Check.ok(prev == null || id > prev, "thread " + w + ": IDs of node " + node + " do not increase at " + i);
                    perNode.merge(node, 1, Integer::sum);
                }
            }
            List<ServerStats> st = c.stats();
            Check.ok(perNode.size() == 2, "IDs of " + perNode.size() + " node values, want both servers': " + perNode);
            ServerStats dead = st.get(killed.get().equals(v1.url) ? 0 : 1);
            ServerStats live = st.get(killed.get().equals(v1.url) ? 1 : 0);
            Check.ok(dead.failures() + dead.outHedged() > 0, "the killed server was never given up on: " + dead);
            Check.ok(live.requests() > 0, "the other server never served");
            System.out.printf("    longest call %.1f ms, longest time no thread got an ID %.1f ms; IDs by node %s; killed %s | live %s; load %s%n",
                maxWait(got) / 1e6, maxGap(got) / 1e6, perNode, dead, live, load());
        });

        r.test("a stopped server (SIGSTOP): the refill is hedged to the next, no timeout waited for", 120, () -> {
            up();
            // hedgeMaxDelay: time for the first answer of a busy machine, which sets
            // the server's hedge delay (its round trips' 95th percentile) after.
            FlurryClient c = client(FlurryClient.builder().servers(a.url, b.url).batch(100).lowWater(50)
                .timeout(Duration.ofHours(1)).hedgeDelay(null, Duration.ofSeconds(5)));
            c.nextMany("default", 10);
            Check.eq(Arrays.asList(1L, 0L), Arrays.asList(c.stats().get(0).requests(), c.stats().get(1).requests()),
                "requests before the stop");
            a.signal("STOP");
            long[] ids;
            try {
                // Well past several refills: with the timeout at an hour, only a
                // hedge can move the client on.
                ids = c.nextMany("default", 1000, Duration.ofSeconds(60));
            } finally {
                a.signal("CONT");
            }
            Check.eq(1000L, Arrays.stream(ids).distinct().count(), "distinct IDs");
            ServerStats sa = c.stats().get(0);
            ServerStats sb = c.stats().get(1);
            Check.ok(sb.hedgesWon() >= 1, "no hedge to the second server won: " + sb);
            Check.ok(sa.outHedged() >= 1, "the stopped server was not out-hedged: " + sa);
            Check.eq(0L, sa.failures(), "failures of the stopped server (only a hedge should have moved the client)");
        });

        r.test("every request hedged at once under 8 threads: no ID twice, each fetch from one answer", 120, () -> {
            up();
            FlurryClient c = client(FlurryClient.builder().servers(a.url, b.url).batch(500)
                .hedgeDelay(Duration.ofNanos(1), Duration.ofNanos(1)));
            Taken[] got = new Taken[8];
            List<Thread> ts = new ArrayList<>();
            AtomicReference<Throwable> err = new AtomicReference<>();
            Layout layout = c.layout("default");
            for (int w = 0; w < got.length; w++) {
                Taken mine = new Taken();
                got[w] = mine;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < 40; i++) {
                            long[] ids = c.fetch("default", 100).ids();
                            long node = layout.decode(ids[0]).fields().get(0).value();
                            for (long id : ids) {
                                // One answer: one server's node value throughout.
                                Check.eq(node, layout.decode(id).fields().get(0).value(), "node of an ID of one fetch");
                                mine.add(id);
                            }
                            for (int k = 0; k < 100; k++) {
                                mine.add(c.next("default"));
                            }
                        }
                    } catch (Throwable e) {
                        err.compareAndSet(null, e);
                    }
                });
                ts.add(t);
                t.start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (err.get() != null) {
                throw new AssertionError("a caller failed: " + err.get(), err.get());
            }
            Check.eq(0L, duplicates(got), "IDs handed out twice");
            long hedges = c.stats().get(0).hedges() + c.stats().get(1).hedges();
            Check.ok(hedges > 0, "no request was hedged: " + c.stats());
        });

        r.test("a listener that never answers: the timeout ends the request, the next server answers", 60, () -> {
            up();
            Harness.Hung hung = new Harness.Hung();
            FlurryClient c = client(FlurryClient.builder().servers(hung.url, a.url).noHedge(true).timeout(Duration.ofMillis(300)));
            c.next("default");
            ServerStats sh = c.stats().get(0);
            Check.eq(1L, sh.failures(), "failures of the hung listener");
            Check.contains(sh.lastError().getMessage(), "no answer within 300 ms", "its error");
            Check.eq(0L, c.stats().get(1).failures(), "failures of the live server");
            Check.ok(hung.accepted() >= 1, "the hung listener was never asked");
        });

        r.test("a listener that never answers: a hedge answers long before the timeout", 60, () -> {
            up();
            Harness.Hung hung = new Harness.Hung();
            FlurryClient c = client(FlurryClient.builder().servers(hung.url, a.url).timeout(Duration.ofHours(1)));
            int calls = 10;
            for (int i = 0; i < calls; i++) {
                Check.eq(10, c.fetch("default", 10, Duration.ofSeconds(60)).ids().length, "IDs fetched");
            }
            ServerStats sh = c.stats().get(0);
            ServerStats sa = c.stats().get(1);
            Check.eq(0L, sh.failures(), "failures of the hung listener");
            Check.ok(sh.outHedged() >= 1, "the hung listener was not out-hedged: " + sh);
            Check.ok(sa.hedgesWon() >= 1, "no hedge won: " + sa);
            // Once out-hedged it is passed over, asked again only as a hedge of a
            // call slower than the live server's own round trips.
            Check.ok(sh.requests() < calls, "the hung listener was asked in each of " + calls + " calls");
        });

        r.test("only a listener that never answers: UnavailableException after the timeout; the caller's own bounds", 60, () -> {
            up();
            Harness.Hung hung = new Harness.Hung();
            FlurryClient c = client(FlurryClient.builder().servers(hung.url).timeout(Duration.ofMillis(300)));
            UnavailableException e = Check.thrown(UnavailableException.class, () -> c.next("default"));
            Check.eq("unavailable", e.code(), "code");
            Check.eq(1, e.attempts().size(), "attempts");
            Check.contains(e.attempts().get(0).error().getMessage(), "no answer within 300 ms", "the attempt");
            Check.contains(e.getMessage(), "check that the servers run and are reachable", "the message");
            FlurryClient slow = client(FlurryClient.builder().servers(hung.url).timeout(Duration.ofHours(1)));
            FlurryTimeoutException t = Check.thrown(FlurryTimeoutException.class, () -> slow.next("default", Duration.ofMillis(200)));
            Check.contains(t.getMessage(), "a refill goes on in the background", "the timeout's message");
            Check.thrown(FlurryTimeoutException.class, () -> slow.fetch("default", 5, Duration.ofMillis(100)));
            // An interrupt ends a wait too, and leaves the thread's status set.
            AtomicReference<Throwable> got = new AtomicReference<>();
            AtomicBoolean still = new AtomicBoolean();
            Thread w = new Thread(() -> {
                try {
                    slow.nextText("sessions");
                } catch (Throwable x) {
                    got.set(x);
                    still.set(Thread.currentThread().isInterrupted());
                }
            });
            int before = hung.accepted();
            w.start();
            hung.awaitAccepted(before + 1); // the text buffer's request is stuck on the listener
            w.interrupt();
            w.join(10_000);
            Check.ok(got.get() instanceof FlurryInterruptedException, "interrupted wait: " + got.get());
            Check.ok(still.get(), "the interrupt status was cleared");
        });

        r.test("every server down: UnavailableException lists each attempt in order", 60, () -> {
            up();
            String d1 = "http://127.0.0.1:" + Harness.freePort();
            String d2 = "http://127.0.0.1:" + Harness.freePort();
            FlurryClient c = client(FlurryClient.builder().servers(d1, d2));
            UnavailableException e = Check.thrown(UnavailableException.class, () -> c.next("default"));
            List<String> tried = new ArrayList<>();
            for (UnavailableException.Attempt x : e.attempts()) {
                tried.add(x.server());
            }
            Check.eq(Arrays.asList(d1, d2), tried, "attempts");
            for (UnavailableException.Attempt x : e.attempts()) {
                Check.contains(x.error().getMessage(), "connection refused", "the attempt's error");
            }
        });

        r.test("refusals are typed, say what to do, and are not failed over", 60, () -> {
            up();
            // No hedges: the second server is asked only if the first is failed over.
            FlurryClient c = client(FlurryClient.builder().servers(a.url, b.url).noHedge(true));
            UnknownNamespaceException u = Check.thrown(UnknownNamespaceException.class, () -> c.next("nope"));
            Check.eq("unknown_namespace", u.code(), "code");
            Check.eq("nope", u.namespace(), "namespace");
            Check.contains(u.getMessage(), "check the namespace's name", "message");
            Check.eq(0L, c.stats().get(1).requests(), "requests to the second server (an unknown namespace was failed over)");
            Check.eq(0L, c.stats().get(0).failures(), "failures");

            UnauthorizedException no = Check.thrown(UnauthorizedException.class, () -> c.next("secret"));
            Check.eq("unauthorized", no.code(), "code");
            Check.contains(no.getMessage(), "pass a token the namespace accepts", "message");
            FlurryClient wrong = client(FlurryClient.builder().servers(a.url).token("not-the-token-of-this-namespace"));
            Check.thrown(UnauthorizedException.class, () -> wrong.next("secret"));
            FlurryClient right = client(FlurryClient.builder().servers(a.url).token("the-others-need-none")
                .token("secret", Harness.SECRET_TOKEN));
            Check.ok(right.next("secret") > 0, "an ID of secret");

            FlurryClient big = client(FlurryClient.builder().servers(a.url).batch(500));
            BadRequestException br = Check.thrown(BadRequestException.class, () -> big.next("small"));
            Check.eq("bad_request", br.code(), "code");
            Check.contains(br.getMessage(), "max_count 100", "message");
            FlurryClient fits = client(FlurryClient.builder().servers(a.url).batch(100));
            Check.eq(250, fits.nextMany("small", 250).length, "IDs of small");

            Check.thrown(WrongKindException.class, () -> c.nextText("default"));
            WrongKindException wk = Check.thrown(WrongKindException.class, () -> c.next("sessions"));
            Check.contains(wk.getMessage(), "use nextText", "message");
            String s = c.nextText("sessions");
            Check.ok(s.matches("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"), "a uuidv7: " + s);
            Check.thrown(BadRequestException.class, () -> c.decode("default", "not-an-id"));
        });

        r.test("IDs, the server's decode and the layout agree; bounds hold an ID's tick", 60, () -> {
            up();
            FlurryClient c = client(FlurryClient.builder().servers(a.url));
            for (String ns : new String[] {"default", "twitter"}) {
                long[] ids = c.nextMany(ns, 2000);
                Check.ok(ids[0] > (1L << 53), ns + ": " + ids[0] + " is not above 2^53");
                Layout layout = c.layout(ns);
                Check.ok(layout != null, ns + " has a layout");
                for (long id : new long[] {ids[0], ids[1], ids[ids.length - 1]}) {
                    Decoded d = c.decode(ns, id);
                    Check.eq(Long.toString(id), d.id(), "the server's decode names the ID");
                    Layout.Parts p = layout.decode(id);
                    Check.eq(d.fields(), p.fields(), ns + ": fields of " + id);
                    Check.eq(d.sequence(), p.sequence(), ns + ": sequence of " + id);
                    Check.eq(d.time(), p.time(), ns + ": time of " + id);
                    Check.eq("snowflake", d.strategy(), "strategy");
                    long[] lh = layout.bounds(p.time(), p.time());
                    Check.ok(lh[0] <= id && id <= lh[1], id + " is outside the bounds of its own tick");
                }
                if (ns.equals("twitter")) {
                    Check.eq(Layout.parse("twitter").toString(), layout.toString(), "twitter's layout");
                    Check.eq(new Info.NamedValue("datacenter", 1), layout.decode(ids[0]).fields().get(0), "datacenter");
                }
            }
            Info info = c.info("");
            Check.ok(info.namespace("default") != null && info.namespace("segment") != null && info.namespace("secret") == null,
                "the namespaces the client may see");
            Info.NamespaceInfo def = info.namespace("default");
            Check.eq("snowflake", def.strategy(), "strategy");
            Check.eq("time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16", def.layout().text(), "default's layout");
            Check.eq("held", def.lease().state(), "the lease");
            Check.eq(null, c.layout("segment"), "segment's layout");
        });

        r.test("an adaptive batch above the server's max_count is halved and retried: no caller sees the refusal", 120, () -> {
            up();
            FlurryClient c = client(FlurryClient.builder().servers(a.url));
            // Eight threads draining as fast as they can raise the batch past 3,000
            // (5 ms of a rate above 600,000 IDs/s, or doubled while callers wait).
            Taken[] got = take(c, "medium", 8, 500_000, null);
            Check.eq(0L, duplicates(got), "IDs handed out twice");
            ServerStats st = c.stats().get(0);
            Check.eq(0L, st.failures(), "failures (a refused count is not a server's failure)");
            Check.ok(st.lastError() == null, "last error: " + st.lastError());
            // 500,000 IDs in batches of at most 3,000: at least 167 answered requests.
            Check.ok(st.requests() >= 167, st.requests() + " requests for 500,000 IDs with max_count 3,000");
        });

        r.test("segment IDs through the buffer: consecutive ranges, none twice", 60, () -> {
            up();
            FlurryClient c = client(FlurryClient.builder().servers(a.url).batch(100).lowWater(30));
            long[] ids = c.nextMany("segment", 1000);
            Check.eq(1000L, Arrays.stream(ids).distinct().count(), "distinct");
            for (int i = 0; i < ids.length; i += 100) {
                Check.eq(99L, ids[i + 99] - ids[i], "batch at " + i + " is one range");
            }
        });

        r.test("close: buffered IDs dropped, calls after it refused, a stuck wait ended", 60, () -> {
            up();
            FlurryClient c = FlurryClient.builder().servers(a.url).batch(50).build();
            c.next("default");
            Check.ok(c.buffered("default") > 0, "IDs buffered");
            c.close();
            Check.eq(0, c.buffered("default"), "buffered after close");
            Check.thrown(ClosedException.class, () -> c.next("default"));
            Check.thrown(ClosedException.class, () -> c.fetch("default", 1));
            c.close(); // again: nothing more

            Harness.Hung hung = new Harness.Hung();
            FlurryClient h = FlurryClient.builder().servers(hung.url).timeout(Duration.ofHours(1)).build();
            AtomicReference<Throwable> got = new AtomicReference<>();
            Thread w = new Thread(() -> {
                try {
                    h.next("default");
                } catch (Throwable x) {
                    got.set(x);
                }
            });
            w.start();
            hung.awaitAccepted(1); // the refill's request is stuck on the listener
            long t0 = System.nanoTime();
            h.close();
            w.join(10_000);
            Check.ok(got.get() instanceof ClosedException, "the waiting call: " + got.get());
            Check.ok(System.nanoTime() - t0 < 30_000_000_000L, "close waited for the hour-long timeout");
        });

        r.test("two servers on the defaults: default and segment refused with a MixException naming both", 120, () -> {
            up();
            Harness.Serve d1 = Harness.startServeDefault();
            Harness.Serve d2 = Harness.startServeDefault();
            String[][] orders = {{d1.url, d2.url}, {d2.url, d1.url}};
            for (String[] o : orders) {
                FlurryClient c = client(FlurryClient.builder().servers(o));
                for (String ns : new String[] {"default", "segment"}) {
                    MixException e = Check.thrown(MixException.class, () -> c.nextMany(ns, 10));
                    Check.eq("mixed", e.code(), "code");
                    Check.eq(o[0], e.first(), "first");
                    Check.eq(o[1], e.second(), "second");
                    Check.contains(e.getMessage(), "give the servers one shared store", "message");
                    // Every later call of the namespace is refused the same way.
                    Check.thrown(MixException.class, () -> c.next(ns));
                }
            }
            // Two that lease from one store are mixed.
            FlurryClient ok = client(FlurryClient.builder().servers(a.url, b.url));
            Check.ok(ok.nextMany("default", 10).length == 10, "IDs of servers on one store");
        });
    }
}
