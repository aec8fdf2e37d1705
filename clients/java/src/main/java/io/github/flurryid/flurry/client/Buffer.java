package io.github.flurryid.flurry.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One namespace's buffer of IDs of one kind (integers or text), in the order
 * received, refilled with one refill in flight at a time (its requests may be
 * hedged: only the winner's IDs reach the buffer). The Go client's design: the
 * batch being handed out is reached through a volatile field and handed out by an
 * atomic counter, so the common case takes no lock: one atomic add, one bounds
 * check, one comparison with the batch's refill trigger. Everything else (the
 * queue of further batches, the refill in flight, closing) is under lock.
 *
 * <p>Batches are installed in the order received and a thread reads the current
 * batch afresh on each call, so the IDs one thread takes come in the order the
 * buffer received them.
 */
final class Buffer {
    /** The IDs per request when the batch option is left out: tinyid's client's step. */
    static final int DEFAULT_BATCH = 1000;
    /** The largest request an adaptive batch grows to: flurry's default max_count. */
    static final int MAX_BATCH = 100_000;

    // Adaptive sizing, as the Go client's: with the batch option left out a request
    // asks for enough IDs to last about SIZE_FOR at the measured drain rate, between
    // DEFAULT_BATCH and MAX_BATCH; with lowWater left out the low-water mark is the
    // IDs drained in LOW_RTTS round trips, and at least half a request, so that a
    // consumer faster than one request per round trip keeps requests going back to
    // back.
    private static final double SIZE_FOR_SECONDS = 0.005;
    private static final int LOW_RTTS = 3;
    /** A drain-rate sample over at least this long replaces the smoothed rate. */
    private static final double RATE_SPAN_SECONDS = 0.1;
    /** The weight of the newest drain-rate and round-trip samples. */
    private static final double RATE_ALPHA = 0.5;

    /** One answer's IDs and how far they have been handed out. */
    static final class Batch {
        final long[] ints;
        final String[] texts;
        final int len;
        /** The next index to hand out; it passes len once used up. */
        final AtomicLong pos = new AtomicLong();
        /**
         * The index at which fewer than the low-water mark of IDs are left in the
         * whole buffer: the caller that takes it, or any later one while no refill
         * runs, starts one.
         */
        volatile long trigger;

        Batch(long[] ints, String[] texts) {
            this.ints = ints;
            this.texts = texts;
            this.len = ints != null ? ints.length : texts.length;
        }
    }

    /**
     * A caller of next waiting for a refill. The refill that lands hands the
     * first IDs of its batch to the waiting callers, oldest first, before any
     * other caller can take one: without it, threads already running take a
     * batch while the woken ones wait for the scheduler, and on busy cores one
     * thread can miss many batches in a row.
     */
    static final class Waiter {
        long id;
        String text;
        boolean filled;
    }

    /** One refill in flight; done opens when it has delivered a batch or failed. */
    private static final class Refill {
        final CountDownLatch done = new CountDownLatch(1);
        volatile RuntimeException err;
    }

    private final FlurryClient c;
    private final String name;
    private final boolean ints;

    private volatile Batch cur;
    private volatile boolean inflight;

    private final ReentrantLock mu = new ReentrantLock();
    private final ArrayDeque<Batch> queue = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private int queued;
    private Refill fetch;
    private long retryAt;
    private boolean retrySet;
    private boolean closed;

    // Refill sizing (see tune): low is the low-water mark in force and size the
    // count the next request asks for; both move only when left out of the options.
    private int low;
    private int size;
    private int maxSize;
    private long got;
    private long lastAt;
    private boolean tuned;
    private long lastUsed;
    private double rate; // IDs handed out per second, smoothed
    private double rtt; // seconds per request, smoothed
    /** A caller found the buffer empty since tune last ran: demand outran the refills. */
    private boolean starved;

    Buffer(FlurryClient c, String name, boolean ints) {
        this.c = c;
        this.name = name;
        this.ints = ints;
        this.size = c.batch;
        this.maxSize = Math.max(c.batch, MAX_BATCH);
        this.low = c.lowWater;
    }

    /** Hands out the oldest buffered integer ID; the common case takes no lock and allocates nothing. */
    long nextLong(Duration bound, long deadline) {
        for (;;) {
            Batch b = cur;
            if (b != null) {
                long i = b.pos.getAndIncrement();
                if (i < b.len) {
                    if (i >= b.trigger && !inflight) {
                        lowWater();
                    }
                    return b.ints[(int) i];
                }
            }
            Waiter w = slow(bound, deadline, true);
            if (w != null) {
                return w.id;
            }
        }
    }

    /** Hands out the oldest buffered text ID. */
    String nextText(Duration bound, long deadline) {
        for (;;) {
            Batch b = cur;
            if (b != null) {
                long i = b.pos.getAndIncrement();
                if (i < b.len) {
                    if (i >= b.trigger && !inflight) {
                        lowWater();
                    }
                    return b.texts[(int) i];
                }
            }
            Waiter w = slow(bound, deadline, true);
            if (w != null) {
                return w.text;
            }
        }
    }

    /**
     * Hands out the count oldest buffered integer IDs, waiting for refills as
     * needed. If it fails midway, the IDs it took are dropped: never handed out later.
     */
    long[] take(int count, Duration bound, long deadline) {
        long[] out = new long[count];
        int n = 0;
        while (n < count) {
            Batch b = cur;
            if (b != null) {
                int want = count - n;
                long i = b.pos.getAndAdd(want);
                if (i < b.len) {
                    int m = (int) Math.min(want, b.len - i);
                    System.arraycopy(b.ints, (int) i, out, n, m);
                    n += m;
                    if (i + m - 1 >= b.trigger && !inflight) {
                        lowWater();
                    }
                    continue;
                }
            }
            slow(bound, deadline, false);
        }
        return out;
    }

    /**
     * The rest of next when the current batch is used up: it moves to the next
     * batch in the queue, or waits for a refill, starting one if none runs (until
     * deadline when bound, the caller's timeout, is not null). A caller of one ID
     * (one) waits as a Waiter and is returned it when the refill handed it an ID;
     * otherwise slow returns null when the current batch may hold IDs again.
     */
    private Waiter slow(Duration bound, long deadline, boolean one) {
        Refill f;
        Waiter w = null;
        mu.lock();
        try {
            if (closed) {
                throw new ClosedException();
            }
            Batch cb = cur;
            if ((cb == null || cb.pos.get() >= cb.len) && !queue.isEmpty()) {
                install();
            }
            cb = cur;
            if (cb != null && cb.pos.get() < cb.len) {
                return null;
            }
            starved = true;
            f = fetch;
            if (f == null) {
                f = start(); // the caller waits anyway: no backoff
            }
            if (one) {
                w = new Waiter();
                waiters.add(w);
            }
        } finally {
            mu.unlock();
        }
        try {
            if (bound == null) {
                f.done.await();
            } else {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !f.done.await(left, TimeUnit.NANOSECONDS)) {
                    if (leave(w)) {
                        return w; // handed an ID just now
                    }
                    throw new FlurryTimeoutException("no IDs of namespace " + Json.quote(name) + " within the call's timeout ("
                        + bound + "); the servers may be slow or down (a refill goes on in the background)");
                }
            }
        } catch (InterruptedException e) {
            if (leave(w)) {
                Thread.currentThread().interrupt();
                return w;
            }
            Thread.currentThread().interrupt();
            throw new FlurryInterruptedException(name, e);
        }
        if (leave(w)) {
            return w;
        }
        RuntimeException err = f.err;
        if (err != null && empty()) {
            throw err;
        }
        return null;
    }

    /** Takes w off the waiters; true if it was handed an ID before. */
    private boolean leave(Waiter w) {
        if (w == null) {
            return false;
        }
        mu.lock();
        try {
            if (w.filled) {
                return true;
            }
            waiters.remove(w);
            return false;
        } finally {
            mu.unlock();
        }
    }

    /** Makes the oldest queued batch the current one. Holds mu; the queue is not empty. */
    private void install() {
        Batch nb = queue.poll();
        queued -= nb.len;
        nb.trigger = nb.len + queued - low;
        cur = nb;
    }

    /** How many IDs are buffered. Holds mu. */
    private int remaining() {
        int n = queued;
        Batch cb = cur;
        if (cb != null) {
            n += cb.len - (int) Math.min(cb.pos.get(), cb.len);
        }
        return n;
    }

    private boolean empty() {
        mu.lock();
        try {
            return remaining() == 0;
        } finally {
            mu.unlock();
        }
    }

    /** How many IDs are buffered now. */
    int buffered() {
        mu.lock();
        try {
            return remaining();
        } finally {
            mu.unlock();
        }
    }

    /**
     * Starts a background refill when the buffer is below the low-water mark, none
     * runs, and the last one did not fail less than a backoff ago.
     */
    private void lowWater() {
        mu.lock();
        try {
            if (closed || fetch != null || remaining() >= low) {
                return;
            }
            if (retrySet && System.nanoTime() - retryAt < 0) {
                return;
            }
            start();
        } finally {
            mu.unlock();
        }
    }

    /** Starts a refill. Holds mu; fetch is null and the buffer is open. */
    private Refill start() {
        Refill f = new Refill();
        fetch = f;
        inflight = true;
        tune(System.nanoTime());
        int sz = size;
        if (!c.background(() -> run(f, sz))) {
            fetch = null;
            inflight = false;
            throw new ClosedException();
        }
        return f;
    }

    /**
     * Fetches batches until the buffer is at or above the low-water mark, or a
     * fetch fails. Each batch wakes the callers waiting for it.
     */
    private void run(Refill f, int sz) {
        for (;;) {
            long t0 = System.nanoTime();
            Batch b = null;
            RuntimeException err = null;
            try {
                Wire.NextAnswer a = c.nextRPC(name, sz, null, 0);
                b = batchOf(a);
            } catch (RuntimeException e) {
                err = e;
            }
            mu.lock();
            if (err instanceof BadRequestException && sz > DEFAULT_BATCH && sz > c.batch && !c.isClosed()) {
                // A grown request above the server's max_count: ask for less from
                // now on, and at once.
                maxSize = Math.max(sz / 2, DEFAULT_BATCH);
                size = Math.min(size, maxSize);
                sz = size;
                mu.unlock();
                continue;
            }
            if (err != null) {
                f.err = c.isClosed() ? new ClosedException() : err;
                retryAt = System.nanoTime() + c.backoffNanos();
                retrySet = true;
                finish(f);
                return;
            }
            retrySet = false;
            if (closed) {
                finish(f);
                return;
            }
            long now = System.nanoTime();
            double d = (now - t0) / 1e9;
            rtt = rtt == 0 ? d : RATE_ALPHA * d + (1 - RATE_ALPHA) * rtt;
            got += b.len;
            Batch used = cur;
            if (!waiters.isEmpty() && queue.isEmpty() && (used == null || used.pos.get() >= used.len)) {
                // Callers wait, and only for this batch: hand them its first IDs,
                // oldest waiter first, then make it the current batch.
                int k = 0;
                while (k < b.len && !waiters.isEmpty()) {
                    Waiter w = waiters.poll();
                    if (ints) {
                        w.id = b.ints[k];
                    } else {
                        w.text = b.texts[k];
                    }
                    w.filled = true;
                    k++;
                }
                b.pos.set(k);
                b.trigger = b.len + queued - low;
                cur = b;
            } else {
                queue.add(b);
                queued += b.len;
            }
            tune(now);
            sz = size;
            Batch cb = cur;
            if (cb != null) {
                // The current batch's trigger moves up by the IDs just queued.
                cb.trigger = cb.len + queued - low;
            }
            f.done.countDown();
            if (remaining() >= low) {
                fetch = null;
                inflight = false;
                mu.unlock();
                // A caller may have passed the new trigger while the lock was held.
                cb = cur;
                if (cb != null && cb.pos.get() >= cb.trigger) {
                    lowWater();
                }
                return;
            }
            f = new Refill();
            fetch = f;
            mu.unlock();
        }
    }

    /** Ends a refill: holds mu on entry and releases it. */
    private void finish(Refill f) {
        fetch = null;
        inflight = false;
        f.done.countDown();
        mu.unlock();
    }

    /** The answer's IDs of this buffer's kind, or a WrongKindException. */
    private Batch batchOf(Wire.NextAnswer a) {
        if (ints) {
            if (a.ids.length == 0) {
                throw new WrongKindException(name, a.server, "the namespace issues text IDs");
            }
            return new Batch(a.ids, null);
        }
        if (a.texts.length == 0) {
            throw new WrongKindException(name, a.server, "the namespace issues integer IDs");
        }
        return new Batch(null, a.texts);
    }

    /** Measures the drain rate since tune last ran and sets size and low for the next request. Holds mu. */
    private void tune(long now) {
        long used = got - remaining();
        if (tuned) {
            double dt = (now - lastAt) / 1e9;
            if (dt > 0) {
                double r = (used - lastUsed) / dt;
                // A sample over a long span is an average already, and the rate of
                // an hour ago says nothing about now.
                rate = rate == 0 || dt >= RATE_SPAN_SECONDS ? r : RATE_ALPHA * r + (1 - RATE_ALPHA) * rate;
            }
        }
        tuned = true;
        lastAt = now;
        lastUsed = used;
        if (c.autoBatch) {
            long want = Math.max((long) (rate * SIZE_FOR_SECONDS), DEFAULT_BATCH);
            if (starved) {
                // Callers waited: the rate measured is what the refills supplied, not
                // what the callers want. Many threads on few cores leave the HTTP
                // client's threads little CPU, so a round trip can outlast the 5 ms
                // a batch is sized for, and sizing by that rate would shrink the
                // batches further: double instead, up to the largest.
                want = Math.max(want, 2L * size);
            }
            size = (int) Math.min(want, maxSize);
        }
        starved = false;
        if (c.autoLow) {
            long lw = Math.max(size / 2, (long) (rate * rtt * LOW_RTTS));
            // Never more than a few requests ahead: a stall of the consumer (a
            // suspended VM, a long collection) must not make the buffer huge.
            low = (int) Math.min(lw, 4L * size);
            Batch cb = cur;
            if (cb != null) {
                cb.trigger = cb.len + queued - low;
            }
        }
    }

    /**
     * Drops the buffered IDs; calls from then on throw ClosedException (a call
     * racing with close may still return an ID of the dropped batch, never one
     * returned before).
     */
    void close() {
        mu.lock();
        try {
            closed = true;
            cur = null;
            queue.clear();
            waiters.clear();
            queued = 0;
        } finally {
            mu.unlock();
        }
    }
}
