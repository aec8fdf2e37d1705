package io.github.flurryid.flurry.client;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One call against the servers in failover order, hedged: the calling thread
 * launches requests (asynchronous, on the HTTP client's threads) and decides, as
 * their answers and its own timers come in, what to do next. A server that fails
 * makes the next one asked at once; a server that has not answered within its
 * hedge delay makes the next one asked too, its own request still running. The
 * first answer wins and the requests still running are cancelled, their answers
 * dropped; those asked before the winner were out-hedged and are passed over as
 * failed ones are. A refusal that another server would repeat ends the call at
 * once, and so do the caller's deadline, an interrupt and close.
 *
 * @param <T> what a successful answer is read into
 */
final class Failover<T> {
    /** What a call sends to one server and how it reads the answer. */
    interface Call<T> {
        /** Completes when the server may be asked (the mix check of a namespace's IDs). */
        CompletableFuture<Void> before(ServerState s);

        /** The request for that server. */
        HttpRequest request(ServerState s);

        /** Reads a 200 answer's JSON object; throws what makes it a failure of that server. */
        T parse(ServerState s, java.util.Map<String, Object> m);
    }

    /** A request's end, or the client's close (CLOSED). */
    private static final class Done {
        final int k;
        final HttpResponse<String> resp;
        final Throwable err;

        Done(int k, HttpResponse<String> resp, Throwable err) {
            this.k = k;
            this.resp = resp;
            this.err = err;
        }
    }

    static final Object CLOSED = new Object();

    private static final class Req {
        final ServerState server;
        final long start;
        final long timeoutAt;
        final boolean hedge;
        boolean running = true;
        volatile boolean cancelled;
        /** The answer's headers arrived: the exchange is past the point where a cancel is safe. */
        volatile boolean answering;
        volatile CompletableFuture<HttpResponse<String>> http;

        Req(ServerState server, long start, long timeoutAt, boolean hedge) {
            this.server = server;
            this.start = start;
            this.timeoutAt = timeoutAt;
            this.hedge = hedge;
        }

        /**
         * Gives the request up. One whose answer has not begun is aborted (from JDK
         * 16 on, its HTTP/1.1 connection is closed): a stopped or cut-off server
         * holds nothing of the client's after it. One whose answer is arriving is
         * left to finish and dropped: cancelling that late can close the keep-alive
         * connection it has just gone back to the pool with, under another request
         * (seen on JDK 17 as "header parser received no bytes").
         */
        void cancel() {
            cancelled = true;
            CompletableFuture<HttpResponse<String>> h = http;
            if (h != null && !answering) {
                h.cancel(true);
            }
        }
    }

    private final FlurryClient c;
    private final HttpClient http;
    private final String namespace;
    private final String method;
    private final Call<T> call;
    private final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final List<Req> reqs = new ArrayList<>();
    // Keyed by the request's index: a hedge sent later may fail first, and the
    // exception lists the attempts in the order they were sent.
    private final TreeMap<Integer, UnavailableException.Attempt> attempts = new TreeMap<>();
    private ServerState[] order;
    private long hedgeAt;
    private boolean hedgeSet;
    private int inflight;

    Failover(FlurryClient c, HttpClient http, String namespace, String method, Call<T> call) {
        this.c = c;
        this.http = http;
        this.namespace = namespace;
        this.method = method;
        this.call = call;
    }

    /** Wakes the call so that it sees the client closed. */
    void wake() {
        events.offer(CLOSED);
    }

    /**
     * Runs the call. deadline is a System.nanoTime() at which the caller stops
     * waiting when bound (the caller's bound, for the FlurryTimeoutException) is
     * not null.
     */
    T run(Duration bound, long deadline) {
        boolean hasDeadline = bound != null;
        if (!c.register(this)) {
            throw new ClosedException();
        }
        try {
            order = c.order(System.nanoTime());
            launch(false);
            for (;;) {
                if (c.isClosed()) {
                    throw new ClosedException();
                }
                long now = System.nanoTime();
                long wake = Long.MAX_VALUE;
                boolean any = false;
                for (Req r : reqs) {
                    if (r.running) {
                        wake = any ? Math.min(wake, r.timeoutAt) : r.timeoutAt;
                        any = true;
                    }
                }
                if (hedgeSet) {
                    wake = any ? Math.min(wake, hedgeAt) : hedgeAt;
                    any = true;
                }
                if (hasDeadline) {
                    wake = any ? Math.min(wake, deadline) : deadline;
                    any = true;
                }
                Object ev;
                try {
                    ev = any ? events.poll(Math.max(wake - now, 0), TimeUnit.NANOSECONDS) : events.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new FlurryInterruptedException(namespace, e);
                }
                if (ev == CLOSED) {
                    throw new ClosedException();
                }
                if (ev != null) {
                    Done d = (Done) ev;
                    T v = settle(d);
                    if (v != null) {
                        return v;
                    }
                    continue;
                }
                now = System.nanoTime();
                for (int k = 0; k < reqs.size(); k++) {
                    Req r = reqs.get(k);
                    if (r.running && now - r.timeoutAt >= 0) {
                        r.cancel();
                        T v = settle(new Done(k, null, timeoutError()));
                        if (v != null) {
                            return v; // never: a timeout is a failure
                        }
                    }
                }
                if (hedgeSet && now - hedgeAt >= 0) {
                    hedgeSet = false;
                    if (reqs.size() < order.length) {
                        launch(true);
                    }
                }
                if (hasDeadline && now - deadline >= 0) {
                    throw new FlurryTimeoutException("no answer for namespace " + Json.quote(namespace)
                        + " within the call's timeout (" + bound + "); the servers may be slow or down");
                }
            }
        } finally {
            for (Req r : reqs) {
                if (r.running) {
                    r.cancel();
                }
            }
            c.unregister(this);
        }
    }

    private IOException timeoutError() {
        return new HttpTimeoutException("no answer within " + c.timeoutMillis() + " ms (the timeout option)");
    }

    private void launch(boolean asHedge) {
        int k = reqs.size();
        ServerState s = order[k];
        long now = System.nanoTime();
        Req r = new Req(s, now, now + c.timeoutNanos(), asHedge);
        reqs.add(r);
        inflight++;
        s.sent(asHedge);
        CompletableFuture<Void> gate;
        try {
            gate = call.before(s);
        } catch (RuntimeException e) {
            gate = CompletableFuture.failedFuture(e);
        }
        gate.whenComplete((v, e) -> {
            if (e != null) {
                events.offer(new Done(k, null, FlurryClient.unwrap(e)));
                return;
            }
            if (r.cancelled) {
                return;
            }
            CompletableFuture<HttpResponse<String>> h;
            try {
                h = http.sendAsync(call.request(s), info -> {
                    r.answering = true;
                    return HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8).apply(info);
                });
            } catch (RuntimeException x) {
                events.offer(new Done(k, null, x));
                return;
            }
            r.http = h;
            if (r.cancelled && !r.answering) {
                h.cancel(true);
            }
            h.whenComplete((resp, x) -> events.offer(new Done(k, resp, x == null ? null : FlurryClient.unwrap(x))));
        });
        hedgeSet = false;
        long d = c.hedgeDelayNanos(s);
        if (d > 0 && k + 1 < order.length) {
            hedgeAt = now + d;
            hedgeSet = true;
        }
    }

    /** Handles one request's end; returns the call's result when it won, else null. */
    private T settle(Done d) {
        Req r = reqs.get(d.k);
        if (!r.running) {
            return null; // already given up on (timed out): its answer is dropped
        }
        r.running = false;
        inflight--;
        ServerState s = r.server;
        Throwable err = d.err;
        T v = null;
        if (err == null) {
            try {
                v = call.parse(s, Wire.answer(method, d.resp.statusCode(), d.resp.body()));
            } catch (ServerAnswerException e) {
                err = e;
            } catch (ServerAnswerException.BrokenAnswer e) {
                err = e.answer();
            } catch (RuntimeException e) {
                err = e;
            }
        }
        if (err instanceof HttpTimeoutException) {
            err = timeoutError();
        } else if (err != null) {
            err = FlurryClient.described(err);
        }
        if (err == null) {
            long now = System.nanoTime();
            s.ok(now - r.start, r.hedge);
            c.answered(s);
            for (int q = 0; q < d.k; q++) {
                Req o = reqs.get(q);
                if (o.running) {
                    o.server.outHedge(s.url, now - o.start, c.backoffNanos(), c.maxBackoffNanos());
                }
            }
            return v;
        }
        RuntimeException ref = FlurryClient.refusal(err, namespace, s.url);
        if (ref != null) {
            throw ref;
        }
        s.fail(err, c.backoffNanos(), c.maxBackoffNanos());
        attempts.put(d.k, new UnavailableException.Attempt(s.url, err));
        if (reqs.size() < order.length) {
            launch(false);
        } else if (inflight == 0) {
            throw new UnavailableException(namespace, new ArrayList<>(attempts.values()));
        }
        return null;
    }
}
