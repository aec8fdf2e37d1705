package io.github.flurryid.flurry.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One server as the client sees it: its counters, its failures in a row and how
 * long it is passed over, and its recent round trips, from which its hedge delay
 * follows. Every method is synchronized: the state is small and touched once per
 * request, never on the buffered path.
 */
final class ServerState {
    /**
     * The hedge delay of a server is a high percentile of its recent successful
     * round trips: a request slower than nearly all of them is more likely stuck (a
     * dead process, a dropped route) than slow. The 95th percentile of 64 samples
     * ignores three outliers (a garbage collection, a busy neighbour) and follows a
     * change of the server's speed within 64 requests.
     */
    static final int LATENCY_WINDOW = 64;
    static final double HEDGE_PERCENTILE = 0.95;

    final String url;
    final int index;
    private long requests;
    private long failures;
    private long hedges;
    private long hedgesWon;
    private long outHedged;
    private final long[] ring = new long[LATENCY_WINDOW];
    private int samples;
    private long percentileNanos;
    private int inARow;
    /** System.nanoTime() until which it is passed over; valid when down. */
    private long downUntil;
    private boolean down;
    private Throwable lastError;

    ServerState(String url, int index) {
        this.url = url;
        this.index = index;
    }

    synchronized void sent(boolean hedge) {
        requests++;
        if (hedge) {
            hedges++;
        }
    }

    /** Records a successful round trip and clears the failures. */
    synchronized void ok(long nanos, boolean hedge) {
        ring[samples % LATENCY_WINDOW] = Math.max(nanos, 1000);
        samples++;
        int n = Math.min(samples, LATENCY_WINDOW);
        long[] s = Arrays.copyOf(ring, n);
        Arrays.sort(s);
        percentileNanos = s[(int) Math.ceil(HEDGE_PERCENTILE * n) - 1];
        inARow = 0;
        down = false;
        lastError = null;
        if (hedge) {
            hedgesWon++;
        }
    }

    /** Marks the server down after a failed request (see passOver). */
    synchronized void fail(Throwable err, long baseNanos, long maxNanos) {
        failures++;
        passOver(baseNanos, maxNanos);
        lastError = err;
    }

    /**
     * Marks the server down as fail does, for a request that a hedge to winner
     * answered first: it counts in outHedged, not failures (the server did not
     * fail, it did not answer in time).
     */
    synchronized void outHedge(String winner, long waitedNanos, long baseNanos, long maxNanos) {
        outHedged++;
        passOver(baseNanos, maxNanos);
        lastError = new java.io.IOException(String.format("no answer within %.1f ms; a hedge to %s answered first",
            waitedNanos / 1e6, winner));
    }

    /**
     * Passes the server over for base·2^(failures in a row − 1), capped at max,
     * less a random jitter of up to half, so that clients that saw one outage do
     * not all come back at the same instant.
     */
    private void passOver(long base, long max) {
        inARow++;
        long d = base;
        for (int k = 1; k < inARow && d < max; k++) {
            d *= 2;
        }
        d = Math.min(d, max);
        d -= (long) (ThreadLocalRandom.current().nextDouble() * (d / 2.0));
        downUntil = System.nanoTime() + d;
        down = true;
    }

    synchronized boolean isDown(long now) {
        return down && now - downUntil < 0;
    }

    /** When it is back, for sorting the servers passed over; meaningful when isDown. */
    synchronized long downUntil() {
        return downUntil;
    }

    /** The percentile of its round trips; 0 before the first. */
    synchronized long percentileNanos() {
        return percentileNanos;
    }

    synchronized ServerStats stats(long hedgeDelayNanos, long now) {
        return new ServerStats(url, requests, failures, hedges, hedgesWon, outHedged, hedgeDelayNanos,
            isDown(now) ? downUntil - now : 0, lastError);
    }

    /**
     * Checks one server address and returns its base URL: a bare host:port gets
     * http://, a trailing slash is dropped. It refuses a scheme other than http or
     * https, a missing host, user information (pass tokens with the token option,
     * never in a URL), a query and a fragment.
     */
    static String normalize(String s) {
        String raw = s == null ? "" : s.trim();
        if (raw.isEmpty()) {
            throw new IllegalArgumentException("empty server address; give one such as http://127.0.0.1:8080");
        }
        URI u;
        try {
            u = new URI(raw.contains("://") ? raw : "http://" + raw);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("server " + Json.quote(s) + " is not a URL; give one such as http://127.0.0.1:8080");
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("server " + Json.quote(s) + ": scheme " + Json.quote(scheme) + " is not http or https");
        }
        if (u.getHost() == null || u.getHost().isEmpty()) {
            throw new IllegalArgumentException("server " + Json.quote(s) + " has no host; give one such as http://127.0.0.1:8080");
        }
        if (u.getRawUserInfo() != null) {
            throw new IllegalArgumentException("server " + Json.quote(scheme + "://" + u.getHost())
                + " holds user information; pass a token with the builder's token instead");
        }
        if (u.getRawQuery() != null || u.getRawFragment() != null || raw.contains("?") || raw.contains("#")) {
            throw new IllegalArgumentException("server " + Json.quote(s) + " has a query or fragment; give only scheme, host, port and path");
        }
        String path = u.getRawPath() == null ? "" : u.getRawPath().replaceAll("/+$", "");
        String host = u.getHost();
        return scheme + "://" + host + (u.getPort() >= 0 ? ":" + u.getPort() : "") + path;
    }
}
