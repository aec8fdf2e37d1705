// One namespace's buffer of IDs of one kind (integers or text), refilled ahead of
// need with one refill in flight at a time (its requests may be hedged: only the
// winning answer's IDs reach the buffer). JavaScript runs one thing at a time, so
// unlike the Go client's buffer this one needs no atomics: a call that finds IDs
// takes one and returns, and the callers waiting for a refill resume in the order
// they started waiting, so IDs go out in the order they were received.

import { BadRequestError, ClosedError, WrongKindError } from "./errors.js";
import type { NextAnswer } from "./wire.js";

/** The IDs per request when the batch option is left out: tinyid's client's step. */
export const defaultBatch = 1000;
/** The largest request an adaptive batch grows to: flurry's default max_count. */
export const maxBatch = 100_000;

// Adaptive sizing, as the Go client's: with the batch option left out a request
// asks for enough IDs to last about sizeForMs at the measured drain rate, between
// defaultBatch and maxBatch; with lowWater left out the low-water mark is the IDs
// drained in lowRTTs round trips, and at least half a request, so that a consumer
// faster than one request per round trip keeps requests going back to back.
const sizeForMs = 5;
const lowRTTs = 3;
/** A drain-rate sample over at least this long replaces the smoothed rate. */
const rateSpanMs = 100;
/** The weight of the newest drain-rate and round-trip samples. */
const rateAlpha = 0.5;

/** What a buffer needs of its client. */
export interface BufferHost {
  /** The batch option, or defaultBatch; whether batch and lowWater were left out. */
  readonly batch: number;
  readonly lowWater: number;
  readonly autoBatch: boolean;
  readonly autoLow: boolean;
  readonly backoffMs: number;
  /** Aborted by close. */
  readonly closeSignal: AbortSignal;
  /** Asks the servers for count IDs, with failover and hedging, until close. */
  request(namespace: string, count: number): Promise<{ answer: NextAnswer; server: string }>;
  /** Keeps a background refill for close to wait for. */
  track(p: Promise<void>): void;
}

/** How long a caller waits for a refill: until its signal ends or its deadline passes. */
export interface Wait {
  readonly signal?: AbortSignal | undefined;
  /** performance.now() at which the wait ends, and the call's timeoutMs, for the message. */
  readonly deadline?: number | undefined;
  readonly timeoutMs?: number | undefined;
}

/** One refill in flight; done resolves when it has delivered a batch or failed. */
interface Refill {
  readonly done: Promise<void>;
  readonly resolve: () => void;
  err: Error | null;
}

function newRefill(): Refill {
  let resolve!: () => void;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return { done, resolve, err: null };
}

/** A namespace's buffer of one kind of ID. */
export class IDBuffer<T extends bigint | string> {
  private cur: T[] = [];
  private pos = 0;
  private queue: T[][] = [];
  private queued = 0;
  private refill: Refill | null = null;
  private retryAt = 0;
  private closed = false;

  // Refill sizing (see tune): low is the low-water mark in force and size the
  // count the next request asks for; both move only when left out of the options.
  private low: number;
  private size: number;
  private maxSize = maxBatch;
  private got = 0;
  private lastAt = -1;
  private lastUsed = 0;
  private rate = 0; // IDs handed out per millisecond, smoothed
  private rtt = 0; // milliseconds per request, smoothed

  constructor(
    private readonly host: BufferHost,
    private readonly name: string,
    private readonly kind: "int" | "text",
  ) {
    this.size = host.batch;
    this.maxSize = Math.max(host.batch, maxBatch);
    this.low = host.lowWater;
  }

  /** How many IDs are buffered. */
  remaining(): number {
    return this.queued + this.cur.length - this.pos;
  }

  /** Hands out the oldest buffered ID, waiting for a refill only when there is none. */
  next(w: Wait): Promise<T> {
    if (this.pos < this.cur.length) {
      const v = this.cur[this.pos++]!;
      this.lowWater();
      return Promise.resolve(v);
    }
    return this.slow(w);
  }

  private async slow(w: Wait): Promise<T> {
    for (;;) {
      if (this.closed) {
        throw new ClosedError();
      }
      if (this.pos >= this.cur.length && this.queue.length > 0) {
        this.install();
      }
      if (this.pos < this.cur.length) {
        const v = this.cur[this.pos++]!;
        this.lowWater();
        return v;
      }
      await this.waitRefill(w);
    }
  }

  /**
   * Hands out the count oldest buffered IDs, waiting for refills as needed. If
   * it fails midway, the IDs it took are dropped: never handed out later.
   */
  async take(count: number, w: Wait): Promise<T[]> {
    const out: T[] = [];
    while (out.length < count) {
      if (this.closed) {
        throw new ClosedError();
      }
      if (this.pos >= this.cur.length && this.queue.length > 0) {
        this.install();
      }
      if (this.pos < this.cur.length) {
        const k = Math.min(count - out.length, this.cur.length - this.pos);
        for (let i = 0; i < k; i++) {
          out.push(this.cur[this.pos + i]!);
        }
        this.pos += k;
        this.lowWater();
        continue;
      }
      await this.waitRefill(w);
    }
    return out;
  }

  /** Waits for the refill in flight, starting one if none runs (the caller waits anyway: no backoff). */
  private async waitRefill(w: Wait): Promise<void> {
    const f = this.refill ?? this.start();
    await waitFor(f.done, w, this.name);
    if (f.err !== null && this.remaining() === 0 && !this.closed) {
      throw f.err;
    }
  }

  /** Makes the oldest queued batch the current one. */
  private install(): void {
    const vals = this.queue.shift()!;
    this.queued -= vals.length;
    this.cur = vals;
    this.pos = 0;
  }

  /**
   * Starts a background refill when the buffer is below the low-water mark, none
   * runs, and the last one did not fail less than a backoff ago.
   */
  private lowWater(): void {
    if (this.refill !== null || this.closed || this.remaining() >= this.low) {
      return;
    }
    if (this.retryAt !== 0 && performance.now() < this.retryAt) {
      return;
    }
    this.start();
  }

  private start(): Refill {
    const f = newRefill();
    this.refill = f;
    this.tune(performance.now());
    this.host.track(this.run(f, this.size));
    return f;
  }

  /**
   * Fetches batches until the buffer is at or above the low-water mark, or a
   * fetch fails. Each batch wakes the callers waiting for it.
   */
  private async run(f: Refill, size: number): Promise<void> {
    for (;;) {
      const t0 = performance.now();
      let vals: T[];
      try {
        const { answer, server } = await this.host.request(this.name, size);
        vals = this.vals(answer, server);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        if (err instanceof BadRequestError && size > defaultBatch && size > this.host.batch && !this.host.closeSignal.aborted) {
          // A grown request above the server's max_count: ask for less from
          // now on, and at once.
          this.maxSize = Math.max(Math.floor(size / 2), defaultBatch);
          this.size = Math.min(this.size, this.maxSize);
          size = this.size;
          continue;
        }
        f.err = this.host.closeSignal.aborted ? new ClosedError() : err;
        this.retryAt = performance.now() + this.host.backoffMs;
        this.refill = null;
        f.resolve();
        return;
      }
      this.retryAt = 0;
      if (this.closed) {
        this.refill = null;
        f.resolve();
        return;
      }
      const now = performance.now();
      this.rtt = this.rtt === 0 ? now - t0 : rateAlpha * (now - t0) + (1 - rateAlpha) * this.rtt;
      this.queue.push(vals);
      this.queued += vals.length;
      this.got += vals.length;
      this.tune(now);
      size = this.size;
      f.resolve();
      if (this.remaining() >= this.low) {
        this.refill = null;
        return;
      }
      f = newRefill();
      this.refill = f;
    }
  }

  /** The IDs of an answer of this buffer's kind, or a WrongKindError. */
  private vals(a: NextAnswer, server: string): T[] {
    if (this.kind === "int") {
      if (a.ids.length === 0) {
        throw new WrongKindError(this.name, server, "the namespace issues text IDs");
      }
      return a.ids as T[];
    }
    if (a.textIds.length === 0) {
      throw new WrongKindError(this.name, server, "the namespace issues integer IDs");
    }
    return a.textIds as T[];
  }

  /** Measures the drain rate since tune last ran and sets size and low for the next request. */
  private tune(now: number): void {
    const used = this.got - this.remaining();
    if (this.lastAt >= 0) {
      const dt = now - this.lastAt;
      if (dt > 0) {
        const r = (used - this.lastUsed) / dt;
        // A sample over a long span is an average already, and the rate of an
        // hour ago says nothing about now.
        this.rate = this.rate === 0 || dt >= rateSpanMs ? r : rateAlpha * r + (1 - rateAlpha) * this.rate;
      }
    }
    this.lastAt = now;
    this.lastUsed = used;
    if (this.host.autoBatch) {
      this.size = Math.min(Math.max(Math.floor(this.rate * sizeForMs), defaultBatch), this.maxSize);
    }
    if (this.host.autoLow) {
      const low = Math.max(Math.floor(this.size / 2), Math.floor(this.rate * this.rtt * lowRTTs));
      // Never more than a few requests ahead: a stall of the consumer (a
      // suspended laptop, a busy event loop) must not make the buffer huge.
      this.low = Math.min(low, 4 * this.size);
    }
  }

  /** Drops the buffered IDs; every call from then on throws ClosedError. */
  close(): void {
    this.closed = true;
    this.cur = [];
    this.pos = 0;
    this.queue = [];
    this.queued = 0;
  }
}

/**
 * Waits for done, or until the caller's signal ends (rejecting with its reason,
 * as fetch does) or its deadline passes (rejecting with a TimeoutError).
 */
function waitFor(done: Promise<void>, w: Wait, namespace: string): Promise<void> {
  const { signal, deadline } = w;
  if (signal === undefined && deadline === undefined) {
    return done;
  }
  return new Promise<void>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cleanup = (): void => {
      if (timer !== undefined) {
        clearTimeout(timer);
      }
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = (): void => {
      cleanup();
      reject(signal!.reason);
    };
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (deadline !== undefined) {
      const left = deadline - performance.now();
      const fire = (): void => {
        cleanup();
        reject(callTimeout(namespace, w.timeoutMs ?? 0));
      };
      if (left <= 0) {
        fire();
        return;
      }
      timer = setTimeout(fire, left);
    }
    void done.then(() => {
      cleanup();
      resolve();
    });
  });
}

/** The error of a call whose timeoutMs passed: a DOMException named TimeoutError, as AbortSignal.timeout gives. */
export function callTimeout(namespace: string, ms: number): Error {
  return new DOMException(
    `no IDs of namespace ${JSON.stringify(namespace)} within the call's timeoutMs (${ms} ms); the servers may be slow or down (a refill goes on in the background)`,
    "TimeoutError",
  );
}
