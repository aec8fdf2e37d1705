package io.github.flurryid.flurry.client;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client of flurry servers: hold one per process (a singleton bean), share it
 * between threads, close it on shutdown.
 *
 * <pre>{@code
 * FlurryClient c = FlurryClient.builder()
 *     .servers("http://10.0.0.1:8080", "http://10.0.0.2:8080")
 *     .token(System.getenv("FLURRY_TOKEN"))
 *     .build();
 * long id = c.next("orders");
 * c.close();
 * }</pre>
 *
 * It hands out IDs of a namespace from a buffer it refills in the background ahead
 * of need, so that most calls of {@link #next} need no network (one atomic add);
 * every request fails over between the servers and is hedged to the next server
 * when its own is slow. flurry's integer IDs have at most 63 bits: they are
 * positive {@code long}s. It speaks the Connect protocol's JSON form over
 * {@code java.net.http} and depends on nothing beyond the JDK.
 *
 * <p>Every method is safe for concurrent use. A buffered ID is returned without
 * waiting; otherwise a call waits for a refill, up to the timeout it is given
 * (without one, until the servers answer or every one of them has failed, each
 * bounded by the builder's timeout).
 */
public final class FlurryClient implements AutoCloseable {
    final int batch;
    final int lowWater;
    final boolean autoBatch;
    final boolean autoLow;
    private final long timeoutNanos;
    private final long backoffNanos;
    private final long maxBackoffNanos;
    private final boolean hedge;
    private final long hedgeMinNanos;
    private final long hedgeMaxNanos;
    private final String token;
    private final Map<String, String> tokens;
    private final ServerState[] servers;
    private final List<String> urls;
    private final HttpClient http;
    private final ExecutorService httpPool;
    private final ExecutorService refills;
    private volatile int last;
    private volatile boolean closed;
    private final ConcurrentHashMap<String, Buffer> ints = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Buffer> texts = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, MixCheck> mixes = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Layout>> layouts = new ConcurrentHashMap<>();
    private final Set<Failover<?>> calls = ConcurrentHashMap.newKeySet();

    private FlurryClient(Builder b) {
        if (b.servers.isEmpty()) {
            throw new IllegalArgumentException("no server; give at least one with servers(\"http://127.0.0.1:8080\")");
        }
        if (b.batch < 0) {
            throw new IllegalArgumentException("batch " + b.batch + " is below 0; leave it at 0 for the adaptive default");
        }
        Set<String> seen = new LinkedHashSet<>();
        for (String s : b.servers) {
            String u = ServerState.normalize(s);
            if (!seen.add(u)) {
                throw new IllegalArgumentException("server " + u + " is listed twice");
            }
        }
        urls = Collections.unmodifiableList(new ArrayList<>(seen));
        servers = new ServerState[urls.size()];
        for (int k = 0; k < servers.length; k++) {
            servers[k] = new ServerState(urls.get(k), k);
        }
        timeoutNanos = nanos("timeout", b.timeout, Duration.ofSeconds(2));
        backoffNanos = nanos("backoff", b.backoff, Duration.ofMillis(100));
        maxBackoffNanos = nanos("maxBackoff", b.maxBackoff, Duration.ofNanos(Math.max(Duration.ofSeconds(10).toNanos(), backoffNanos)));
        if (maxBackoffNanos < backoffNanos) {
            throw new IllegalArgumentException("maxBackoff " + Duration.ofNanos(maxBackoffNanos) + " is below backoff " + Duration.ofNanos(backoffNanos));
        }
        long hmin = b.hedgeMinDelay == null || b.hedgeMinDelay.isZero() ? 0 : nanos("hedgeMinDelay", b.hedgeMinDelay, Duration.ZERO);
        hedgeMaxNanos = nanos("hedgeMaxDelay", b.hedgeMaxDelay, Duration.ofNanos(Math.max(Duration.ofMillis(100).toNanos(), hmin)));
        hedgeMinNanos = hmin == 0 ? Math.min(Duration.ofMillis(10).toNanos(), hedgeMaxNanos) : hmin;
        if (hedgeMaxNanos < hedgeMinNanos) {
            throw new IllegalArgumentException("hedgeMaxDelay " + Duration.ofNanos(hedgeMaxNanos) + " is below hedgeMinDelay " + Duration.ofNanos(hedgeMinNanos));
        }
        hedge = !b.noHedge;
        token = b.token == null ? "" : b.token;
        tokens = new HashMap<>(b.tokens);
        autoBatch = b.batch == 0;
        autoLow = b.lowWater == 0;
        batch = autoBatch ? Buffer.DEFAULT_BATCH : b.batch;
        lowWater = autoLow ? batch / 2 : Math.max(b.lowWater, 0);
        refills = Executors.newCachedThreadPool(daemons("flurry-refill"));
        if (b.httpClient != null) {
            http = b.httpClient;
            httpPool = null;
        } else {
            httpPool = Executors.newCachedThreadPool(daemons("flurry-http"));
            // HTTP/1.1 on keep-alive connections: a cancelled request (a hedge's
            // loser, a timeout) closes its own connection and no other request's.
            http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofNanos(timeoutNanos))
                .executor(httpPool)
                .build();
        }
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static long nanos(String name, Duration d, Duration def) {
        if (d == null || d.isZero()) {
            return def.toNanos();
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " " + d + " is negative; leave it unset for the default (" + def + ")");
        }
        return d.toNanos();
    }

    /** A new builder; only {@link Builder#servers} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The options of a client. Each left unset means its default; {@link #build}
     * checks them and contacts no server (the first call does).
     */
    public static final class Builder {
        private final List<String> servers = new ArrayList<>();
        private String token;
        private final Map<String, String> tokens = new HashMap<>();
        private int batch;
        private int lowWater;
        private Duration timeout;
        private Duration backoff;
        private Duration maxBackoff;
        private Duration hedgeMinDelay;
        private Duration hedgeMaxDelay;
        private boolean noHedge;
        private HttpClient httpClient;

        private Builder() {
        }

        /**
         * Base URLs of flurry servers ("http://10.0.0.1:8080"; a bare "host:port"
         * means http://), tried in this order at first; a value may hold several,
         * comma-separated. Adds to those given before.
         */
        public Builder servers(String... urls) {
            for (String u : urls) {
                for (String part : (u == null ? "" : u).split(",", -1)) {
                    servers.add(part.trim());
                }
            }
            return this;
        }

        /** As {@link #servers(String...)}, from a list. */
        public Builder servers(List<String> urls) {
            return servers(urls.toArray(new String[0]));
        }

        /** Sent as "Authorization: Bearer &lt;token&gt;" when not empty (null: no token). */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /** The token of one namespace, overriding {@link #token(String)} for it. */
        public Builder token(String namespace, String token) {
            tokens.put(namespace, token == null ? "" : token);
            return this;
        }

        /**
         * IDs per request; at most the servers' max_count (100,000 unless
         * configured). 0 (the default): adaptive, 1,000 raised to about 5 ms of the
         * measured rate of use, up to 100,000 (halved and retried if a server
         * refuses that count), lowered again when use slows. Set it to bound the IDs
         * that close drops.
         */
        public Builder batch(int batch) {
            this.batch = batch;
            return this;
        }

        /**
         * Refill in the background when fewer IDs than this remain in a namespace's
         * buffer; negative: only when it is empty (the caller then waits). 0 (the
         * default): adaptive, the IDs used in three round trips at the measured
         * rate, at least half a request, at most four requests.
         */
        public Builder lowWater(int lowWater) {
            this.lowWater = lowWater;
            return this;
        }

        /**
         * Bound of each request to one server (default 2 s); past it the server has
         * failed and the next one is tried (with hedging, the next was usually asked
         * long before).
         */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * How long a failed or out-hedged server is passed over: backoff after its
         * first failure (default 100 ms), doubling with each further failure in a
         * row up to maxBackoff (default 10 s), less a random jitter of up to half.
         */
        public Builder backoff(Duration backoff, Duration maxBackoff) {
            this.backoff = backoff;
            this.maxBackoff = maxBackoff;
            return this;
        }

        /**
         * Bounds of the hedge delay (defaults 10 ms and 100 ms): a request its server
         * has not answered within the 95th percentile of that server's last 64
         * round trips, kept within these bounds (the upper one before its first
         * answer), is also sent to the next server; the first answer wins and the
         * other request is cancelled, its IDs never handed out. So a server that
         * hangs costs a caller hedgeMaxDelay at most, not the timeout.
         */
        public Builder hedgeDelay(Duration min, Duration max) {
            this.hedgeMinDelay = min;
            this.hedgeMaxDelay = max;
            return this;
        }

        /** true: no hedges; a server is left only when it fails or the timeout passes. */
        public Builder noHedge(boolean noHedge) {
            this.noHedge = noHedge;
            return this;
        }

        /**
         * The HTTP client to send with (for TLS settings, a proxy); by default the
         * client's own, HTTP/1.1 on keep-alive connections. Cancelling a request
         * (a hedge's loser, a timeout) aborts its exchange from JDK 16 on.
         */
        public Builder httpClient(HttpClient httpClient) {
            this.httpClient = httpClient;
            return this;
        }

        /** Checks the options and makes the client; throws IllegalArgumentException naming what is wrong. */
        public FlurryClient build() {
            return new FlurryClient(this);
        }
    }

    /** The IDs of one unbuffered request ({@link FlurryClient#fetch}). */
    public static final class Fetched {
        private final long[] ids;
        private final List<String> texts;
        private final String server;

        Fetched(long[] ids, String[] texts, String server) {
            this.ids = ids;
            this.texts = Collections.unmodifiableList(Arrays.asList(texts));
            this.server = server;
        }

        /** Integer IDs (snowflake, segment, redis), increasing; empty for text namespaces. */
        public long[] ids() {
            return ids.clone();
        }

        /** Text IDs (uuidv7, objectid); empty for integer namespaces. */
        public List<String> texts() {
            return texts;
        }

        /** The server that answered. */
        public String server() {
            return server;
        }
    }

    // ---- the calls

    /**
     * Returns an ID of the namespace: from its buffer when it holds one (no
     * network), else after waiting for a refill. Throws a {@link RefusedException}
     * subclass (unknown namespace, token refused, bad request, a text namespace),
     * an {@link UnavailableException} (every server failed), a
     * {@link MixException}, a {@link FlurryInterruptedException} or a
     * {@link ClosedException}.
     */
    public long next(String namespace) {
        return buffer(ints, namespace, true).nextLong(null, 0);
    }

    /**
     * As {@link #next(String)}, waiting at most timeout for a refill: past it, a
     * {@link FlurryTimeoutException} (the refill goes on, and its IDs serve later
     * calls). A buffered ID is returned without looking at timeout.
     */
    public long next(String namespace, Duration timeout) {
        return buffer(ints, namespace, true).nextLong(timeout, deadline(timeout));
    }

    /**
     * Returns count IDs of the namespace, in the order the buffer holds them, taking
     * as many refills as they need. If the call fails midway, the IDs it had taken
     * are dropped (never handed out later).
     */
    public long[] nextMany(String namespace, int count) {
        checkCount(count);
        return buffer(ints, namespace, true).take(count, null, 0);
    }

    /** As {@link #nextMany(String, int)}, waiting at most timeout in all. */
    public long[] nextMany(String namespace, int count, Duration timeout) {
        checkCount(count);
        return buffer(ints, namespace, true).take(count, timeout, deadline(timeout));
    }

    /** Returns a text ID (uuidv7, objectid) of the namespace, buffered as next does. */
    public String nextText(String namespace) {
        return buffer(texts, namespace, false).nextText(null, 0);
    }

    /** As {@link #nextText(String)}, waiting at most timeout. */
    public String nextText(String namespace, Duration timeout) {
        return buffer(texts, namespace, false).nextText(timeout, deadline(timeout));
    }

    /** How many IDs the namespace's buffers hold now. */
    public int buffered(String namespace) {
        Buffer i = ints.get(namespace);
        Buffer t = texts.get(namespace);
        return (i == null ? 0 : i.buffered()) + (t == null ? 0 : t.buffered());
    }

    /**
     * Asks a server for count IDs of the namespace, with failover and hedging,
     * bypassing the buffer: all from one answer. count is at most the servers'
     * max_count (100,000 unless configured).
     */
    public Fetched fetch(String namespace, int count) {
        return fetch(namespace, count, null);
    }

    /** As {@link #fetch(String, int)}, waiting at most timeout (null: no bound but the servers'). */
    public Fetched fetch(String namespace, int count, Duration timeout) {
        checkCount(count);
        open();
        Wire.NextAnswer a = nextRPC(namespace, count, timeout, timeout == null ? 0 : deadline(timeout));
        return new Fetched(a.ids, a.texts, a.server);
    }

    /**
     * Asks a server to take an ID of the namespace apart, per the namespace's real
     * layout and epoch, with failover.
     */
    public Decoded decode(String namespace, long id) {
        return decode(namespace, Long.toString(id));
    }

    /** As {@link #decode(String, long)}, for an ID in its text form (decimal, uuidv7, objectid). */
    public Decoded decode(String namespace, String id) {
        open();
        String body = "{\"namespace\":" + Json.quote(namespace) + ",\"id\":" + Json.quote(id) + "}";
        return unbuffered(namespace, "Decode", body, (s, m) -> Decoded.of(m));
    }

    /**
     * Asks a server to describe its namespaces (all when namespace is empty), with
     * failover. A server shows only the namespaces the client's token opens.
     */
    public Info info(String namespace) {
        open();
        String body = "{\"namespace\":" + Json.quote(namespace) + "}";
        return unbuffered(namespace, "Info", body, (s, m) -> Info.of(m));
    }

    /**
     * The layout of a snowflake or redis namespace's IDs, from the server's info
     * (asked once per namespace, then kept), to take IDs apart without asking a
     * server; null for namespaces without one (segment, uuidv7, objectid).
     */
    public Layout layout(String namespace) {
        CompletableFuture<Layout> mine = new CompletableFuture<>();
        CompletableFuture<Layout> f = layouts.putIfAbsent(namespace, mine);
        if (f == null) {
            try {
                Info.NamespaceInfo ni = info(namespace).namespace(namespace);
                String text = ni == null || ni.layout() == null ? "" : ni.layout().text();
                mine.complete(text.isEmpty() ? null : Layout.parse(text));
            } catch (RuntimeException e) {
                layouts.remove(namespace, mine);
                mine.completeExceptionally(e);
            }
            f = mine;
        }
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlurryInterruptedException(namespace, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c : new CompletionException(c);
        }
    }

    /** Each server's counters, in the order of the servers option. */
    public List<ServerStats> stats() {
        long now = System.nanoTime();
        List<ServerStats> out = new ArrayList<>();
        for (ServerState s : servers) {
            out.add(s.stats(hedgeDelayNanos(s), now));
        }
        return out;
    }

    /**
     * Cancels the requests in flight, drops every buffered ID (IDs fetched but not
     * handed out are lost: never handed out later or twice), and returns when the
     * background refills have ended (waiting at most the request timeout for them).
     * Calls after close throw ClosedException. Calling it again does nothing more.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Buffer b : ints.values()) {
            b.close();
        }
        for (Buffer b : texts.values()) {
            b.close();
        }
        for (Failover<?> f : calls) {
            f.wake();
        }
        refills.shutdown();
        try {
            if (!refills.awaitTermination(timeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS)) {
                refills.shutdownNow();
            }
        } catch (InterruptedException e) {
            refills.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (httpPool != null) {
            httpPool.shutdownNow();
        }
    }

    // ---- inside

    private static void checkCount(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count " + count + " is below 1");
        }
    }

    private static long deadline(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout " + timeout + " is not a duration of 0 or more");
        }
        return System.nanoTime() + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4);
    }

    private void open() {
        if (closed) {
            throw new ClosedException();
        }
    }

    boolean isClosed() {
        return closed;
    }

    private Buffer buffer(ConcurrentHashMap<String, Buffer> m, String namespace, boolean isInt) {
        Buffer b = m.get(namespace);
        if (b == null) {
            if (namespace == null) {
                throw new IllegalArgumentException("namespace is null");
            }
            b = m.computeIfAbsent(namespace, n -> new Buffer(this, n, isInt));
            if (closed) {
                b.close();
            }
        }
        return b;
    }

    String tokenFor(String namespace) {
        String t = tokens.get(namespace);
        return t != null ? t : token;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    long timeoutMillis() {
        return TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
    }

    long backoffNanos() {
        return backoffNanos;
    }

    long maxBackoffNanos() {
        return maxBackoffNanos;
    }

    /** Runs a refill on the client's threads; false once closed. */
    boolean background(Runnable r) {
        if (closed) {
            return false;
        }
        try {
            refills.execute(r);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    boolean register(Failover<?> f) {
        calls.add(f);
        if (closed) {
            calls.remove(f);
            return false;
        }
        return true;
    }

    void unregister(Failover<?> f) {
        calls.remove(f);
    }

    void answered(ServerState s) {
        last = s.index;
    }

    /** The base URL of the server that answered last: the one in use. */
    String inUse() {
        return urls.get(last);
    }

    private HttpRequest post(ServerState s, String method, String body, String namespace) {
        return Wire.request(s.url, method, body, tokenFor(namespace), Duration.ofNanos(timeoutNanos));
    }

    /**
     * Asks for count IDs with failover and hedging, after the namespace's mix
     * check; until deadline when bound (the caller's timeout) is not null.
     */
    Wire.NextAnswer nextRPC(String namespace, int count, Duration bound, long deadline) {
        String body = Wire.nextRequest(namespace, count);
        MixCheck mix = mixFor(namespace);
        return new Failover<>(this, http, namespace, "Next", new Failover.Call<Wire.NextAnswer>() {
            @Override
            public CompletableFuture<Void> before(ServerState s) {
                return mix == null ? CompletableFuture.completedFuture(null) : mix.vet(s.index);
            }

            @Override
            public HttpRequest request(ServerState s) {
                return post(s, "Next", body, namespace);
            }

            @Override
            public Wire.NextAnswer parse(ServerState s, Map<String, Object> m) {
                return Wire.parseNext(m, count, s.url);
            }
        }).run(bound, deadline);
    }

    private <T> T unbuffered(String namespace, String method, String body,
                             java.util.function.BiFunction<ServerState, Map<String, Object>, T> read) {
        return new Failover<>(this, http, namespace, method, new Failover.Call<T>() {
            @Override
            public CompletableFuture<Void> before(ServerState s) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public HttpRequest request(ServerState s) {
                return post(s, method, body, namespace);
            }

            @Override
            public T parse(ServerState s, Map<String, Object> m) {
                return read.apply(s, m);
            }
        }).run(null, 0);
    }

    /** The namespace's MixCheck, made on first use; null with one server. */
    private MixCheck mixFor(String namespace) {
        if (servers.length < 2) {
            return null;
        }
        return mixes.computeIfAbsent(namespace, n -> new MixCheck(n, urls, k -> {
            String body = "{\"namespace\":" + Json.quote(n) + "}";
            return Wire.unary(http, servers[k].url, "Info", body, tokenFor(n), Duration.ofNanos(timeoutNanos))
                .thenApply(Info::of);
        }));
    }

    /**
     * The servers in failover order: those in use, starting from the last that
     * answered, then those passed over (after a failure or an out-hedged request),
     * soonest back first. A call never gives up without asking each server once.
     */
    ServerState[] order(long now) {
        int n = servers.length;
        List<ServerState> out = new ArrayList<>(n);
        List<ServerState> later = new ArrayList<>();
        int l = last;
        for (int k = 0; k < n; k++) {
            ServerState s = servers[(l + k) % n];
            (s.isDown(now) ? later : out).add(s);
        }
        later.sort((a, b) -> Long.compare(a.downUntil() - now, b.downUntil() - now));
        out.addAll(later);
        return out.toArray(new ServerState[0]);
    }

    /**
     * How long a request to s waits for an answer before the next server is asked
     * too: the percentile of s's round trips within the bounds, the upper bound
     * before its first answer, and 0 when hedging is off.
     */
    long hedgeDelayNanos(ServerState s) {
        if (!hedge) {
            return 0;
        }
        long p = s.percentileNanos();
        return p == 0 ? hedgeMaxNanos : Math.min(Math.max(p, hedgeMinNanos), hedgeMaxNanos);
    }

    /** err, or for one without a message (the JDK's ConnectException of a refused connection) one that says what happened. */
    static Throwable described(Throwable err) {
        if (err.getMessage() != null) {
            return err;
        }
        return new java.io.IOException(err instanceof java.net.ConnectException ? "connection refused"
            : err.getClass().getSimpleName(), err);
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * The exception to throw at once when err is a refusal that failover cannot fix
     * (another server would say the same), else null.
     */
    static RuntimeException refusal(Throwable err, String namespace, String server) {
        if (err instanceof RefusedException || err instanceof MixException) {
            return (RuntimeException) err;
        }
        if (!(err instanceof ServerAnswerException)) {
            return null;
        }
        ServerAnswerException e = (ServerAnswerException) err;
        switch (e.connectCode()) {
            case "not_found":
                return new UnknownNamespaceException(namespace, server, e.getMessage(), e);
            case "unauthenticated":
            case "permission_denied":
                return new UnauthorizedException(namespace, server, e.getMessage(), e);
            case "invalid_argument":
            case "out_of_range":
                return new BadRequestException(namespace, server, e.getMessage(), e);
            default:
                return null;
        }
    }
}
