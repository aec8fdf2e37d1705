package io.github.flurryid.flurry.client;

import java.time.Duration;

/** One server's counters as the client sees them ({@link FlurryClient#stats()}). */
public final class ServerStats {
    private final String url;
    private final long requests;
    private final long failures;
    private final long hedges;
    private final long hedgesWon;
    private final long outHedged;
    private final Duration hedgeDelay;
    private final Duration downFor;
    private final Throwable lastError;

    ServerStats(String url, long requests, long failures, long hedges, long hedgesWon, long outHedged,
                long hedgeDelayNanos, long downForNanos, Throwable lastError) {
        this.url = url;
        this.requests = requests;
        this.failures = failures;
        this.hedges = hedges;
        this.hedgesWon = hedgesWon;
        this.outHedged = outHedged;
        this.hedgeDelay = Duration.ofNanos(hedgeDelayNanos);
        this.downFor = Duration.ofNanos(downForNanos);
        this.lastError = lastError;
    }

    /** The server's base URL. */
    public String url() {
        return url;
    }

    /** Requests sent to it, hedges included. */
    public long requests() {
        return requests;
    }

    /** Of them, those that failed. */
    public long failures() {
        return failures;
    }

    /** Requests sent to it as hedges of a slower server. */
    public long hedges() {
        return hedges;
    }

    /** Of them, those whose answer was used. */
    public long hedgesWon() {
        return hedgesWon;
    }

    /** Its requests cancelled because a hedge to another server answered first. */
    public long outHedged() {
        return outHedged;
    }

    /** How long a request to it waits before the next server is asked too; zero with noHedge. */
    public Duration hedgeDelay() {
        return hedgeDelay;
    }

    /** How much longer it is passed over; zero when in use. */
    public Duration downFor() {
        return downFor;
    }

    /** The last failure (or out-hedged request); null after a success. */
    public Throwable lastError() {
        return lastError;
    }

    @Override
    public String toString() {
        return url + ": requests=" + requests + " failures=" + failures + " hedges=" + hedges
            + " hedgesWon=" + hedgesWon + " outHedged=" + outHedged + " hedgeDelay=" + hedgeDelay
            + " downFor=" + downFor + (lastError == null ? "" : " lastError=" + lastError.getMessage());
    }
}
