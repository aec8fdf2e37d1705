// The client: options, per-namespace buffers, and the failover and hedging that
// every request goes through.

import { callTimeout, defaultBatch, IDBuffer, type BufferHost, type Wait } from "./buffer.js";
import {
  BadRequestError,
  ClosedError,
  MixError,
  OptionsError,
  RefusedError,
  ServerError,
  UnauthorizedError,
  UnavailableError,
  UnknownNamespaceError,
  type Attempt,
} from "./errors.js";
import { decodedOf, infoOf, type Decoded, type Info } from "./info.js";
import { Layout } from "./layout.js";
import { MixCheck } from "./mix.js";
import { regionOrder, regionServers, type RegionServer, type RemoteRegion } from "./regions.js";
import { ServerState } from "./servers.js";
import { parseNext, unary, type FetchFunction, type NextAnswer } from "./wire.js";

/** Defaults of {@link ClientOptions}, in milliseconds where they are times. */
export const defaults = Object.freeze({
  batch: defaultBatch,
  timeoutMs: 2000,
  backoffMs: 100,
  maxBackoffMs: 10_000,
  hedgeMinDelayMs: 10,
  hedgeMaxDelayMs: 100,
});

/**
 * Options of a {@link Client}. Only servers is required; a field left out (or
 * undefined) means its default.
 */
export interface ClientOptions {
  /**
   * Base URLs of flurry servers ("http://10.0.0.1:8080"; a bare "host:port"
   * means http://), tried in this order at first. At least one. In a browser
   * the page's own origin (location.origin) when flurry sits behind the same
   * reverse proxy: the server sends no CORS headers.
   */
  servers: readonly string[];
  /**
   * Other regions' servers, one region each, in the order to fall back to them
   * (docs/multi-region.md): a request goes to a remote region only when every
   * server of servers (the local region) has failed, and hedges never cross
   * regions. Once a local server's backoff has passed, the next request asks
   * it first again. Left out: one region.
   */
  remote?: readonly RemoteRegion[] | undefined;
  /** Sent as "Authorization: Bearer <token>" when not empty. */
  token?: string | undefined;
  /** Overrides token for the namespaces it names. */
  tokens?: Readonly<Record<string, string>> | undefined;
  /**
   * IDs per request; at most the servers' max_count (100,000 unless
   * configured). Left out: adaptive, 1,000 raised to about 5 ms of the measured
   * rate of use, up to 100,000 (halved and retried if a server refuses that
   * count), lowered again when use slows. Set it to bound the IDs that close
   * drops.
   */
  batch?: number | undefined;
  /**
   * Refill in the background when fewer IDs than this remain in a namespace's
   * buffer; negative: only when it is empty (the caller then waits). Left out:
   * adaptive, the IDs used in three round trips at the measured rate, at least
   * half a request, at most four requests.
   */
  lowWater?: number | undefined;
  /**
   * Bound of each request to one server, in milliseconds (an AbortController
   * ends it); past it the server has failed and the next one is tried (with
   * hedging the next was usually asked long before). Default 2000.
   */
  timeoutMs?: number | undefined;
  /**
   * How long a failed or out-hedged server is passed over: backoffMs after its
   * first failure, doubling with each further failure in a row up to
   * maxBackoffMs, less a random jitter of up to half. Defaults 100 and 10,000.
   */
  backoffMs?: number | undefined;
  maxBackoffMs?: number | undefined;
  /**
   * Bounds of the hedge delay, in milliseconds: a request that its server has
   * not answered within the 95th percentile of that server's last 64 round
   * trips, kept within these bounds (the upper one before its first answer),
   * is also sent to the next server; the first answer wins and the other
   * request is aborted, its IDs never handed out. So a server that hangs costs
   * a caller hedgeMaxDelayMs at most, not timeoutMs. Defaults 10 and 100.
   */
  hedgeMinDelayMs?: number | undefined;
  hedgeMaxDelayMs?: number | undefined;
  /** true: no hedges; a server is left only when it fails or timeoutMs passes. */
  noHedge?: boolean | undefined;
  /** The fetch to call; the global fetch when left out. */
  fetch?: FetchFunction | undefined;
}

/** Options of one call. */
export interface CallOptions {
  /**
   * Ends the caller's wait: the call rejects with signal.reason (the refill it
   * waited for goes on in the background, and its IDs serve later calls). An ID
   * already buffered is returned without looking at it.
   */
  signal?: AbortSignal | undefined;
  /**
   * Bounds the caller's wait in milliseconds, as signal does; the call rejects
   * with a DOMException named TimeoutError.
   */
  timeoutMs?: number | undefined;
}

/** The IDs of one unbuffered request (Client.fetch). */
export interface Fetched {
  /** Integer IDs (snowflake, segment, redis), increasing; empty for text namespaces. */
  readonly ids: bigint[];
  /** Text IDs (uuidv7, objectid); empty for integer namespaces. */
  readonly textIds: string[];
}

/** One server as the client sees it (Client.stats). */
export interface ServerStats {
  readonly url: string;
  /** The remote region's name (ClientOptions.remote); "" for the local region. */
  readonly region: string;
  /** Requests sent, hedges included, and of them those that failed. */
  readonly requests: number;
  readonly failures: number;
  /** Requests sent to it as hedges, and of them those whose answer was used. */
  readonly hedges: number;
  readonly hedgesWon: number;
  /** Its requests aborted because a hedge to another server answered first. */
  readonly outHedged: number;
  /** How long a request to it waits before it is hedged; 0 with noHedge. */
  readonly hedgeDelayMs: number;
  /** Passed over until then; null when in use. */
  readonly downUntil: Date | null;
  /** The last failure (or out-hedged request); null after a success. */
  readonly lastError: Error | null;
}

interface Namespace {
  ints: IDBuffer<bigint>;
  texts: IDBuffer<string>;
}

/**
 * A client of flurry servers. It hands out IDs of a namespace from a buffer it
 * refills in the background ahead of need, so that most calls of next need no
 * network; every request fails over between the servers and is hedged to the
 * next server when its own is slow. Integer IDs are bigint, never number:
 * flurry's IDs have up to 63 bits, and a number holds integers exactly only up
 * to 2^53. Close it when done.
 */
export class Client {
  private readonly servers: ServerState[] = [];
  /** Each server's region, by the index in servers. */
  private readonly regions: RegionServer[] = [];
  /** By namespace: what the servers said of it (MixCheck); none with one server. */
  private readonly mixes = new Map<string, MixCheck>();
  private last = 0;
  private readonly token: string;
  private readonly tokens: ReadonlyMap<string, string>;
  private readonly timeoutMs: number;
  private readonly maxBackoffMs: number;
  private readonly hedge: boolean;
  private readonly hedgeMin: number;
  private readonly hedgeMax: number;
  private readonly fetchFn: FetchFunction;
  private readonly namespaces = new Map<string, Namespace>();
  private readonly layouts = new Map<string, Promise<Layout | null>>();
  private readonly refills = new Set<Promise<void>>();
  private readonly closer = new AbortController();
  private closed = false;
  private readonly host: BufferHost;

  /** Checks the options; contacts no server (the first call does). Throws an OptionsError. */
  constructor(opts: ClientOptions) {
    if (opts === null || typeof opts !== "object" || !Array.isArray(opts.servers) || opts.servers.length === 0) {
      throw new OptionsError("no server; set servers to at least one URL such as http://127.0.0.1:8080");
    }
    const batch = opts.batch ?? 0;
    if (!Number.isInteger(batch) || batch < 0) {
      throw new OptionsError(`batch ${batch} is not a whole number of 0 or more; leave it out for the adaptive default`);
    }
    const low = opts.lowWater ?? 0;
    if (!Number.isInteger(low)) {
      throw new OptionsError(`lowWater ${low} is not a whole number; leave it out for the adaptive default`);
    }
    const ms = (name: string, v: number | undefined, def: number): number => {
      if (v === undefined || v === 0) {
        return def;
      }
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        throw new OptionsError(`${name} ${v} is not a number of milliseconds of 0 or more; leave it out for the default (${def})`);
      }
      return v;
    };
    this.timeoutMs = ms("timeoutMs", opts.timeoutMs, defaults.timeoutMs);
    const backoffMs = ms("backoffMs", opts.backoffMs, defaults.backoffMs);
    this.maxBackoffMs = ms("maxBackoffMs", opts.maxBackoffMs, Math.max(defaults.maxBackoffMs, backoffMs));
    if (this.maxBackoffMs < backoffMs) {
      throw new OptionsError(`maxBackoffMs ${this.maxBackoffMs} is below backoffMs ${backoffMs}`);
    }
    const hmin = opts.hedgeMinDelayMs === undefined || opts.hedgeMinDelayMs === 0 ? 0 : ms("hedgeMinDelayMs", opts.hedgeMinDelayMs, 0);
    this.hedgeMax = ms("hedgeMaxDelayMs", opts.hedgeMaxDelayMs, Math.max(defaults.hedgeMaxDelayMs, hmin));
    this.hedgeMin = hmin === 0 ? Math.min(defaults.hedgeMinDelayMs, this.hedgeMax) : hmin;
    if (this.hedgeMax < this.hedgeMin) {
      throw new OptionsError(`hedgeMaxDelayMs ${this.hedgeMax} is below hedgeMinDelayMs ${this.hedgeMin}`);
    }
    this.hedge = opts.noHedge !== true;
    this.token = opts.token ?? "";
    this.tokens = new Map(Object.entries(opts.tokens ?? {}));
    const f = opts.fetch ?? (globalThis.fetch as FetchFunction | undefined);
    if (typeof f !== "function") {
      throw new OptionsError("no fetch function: this runtime has no global fetch (Node.js 18 or later has one); pass one as the fetch option");
    }
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    for (const r of regionServers(opts.servers, opts.remote)) {
      this.servers.push(new ServerState(r.url));
      this.regions.push(r);
    }
    const client = this;
    this.host = {
      batch: batch === 0 ? defaultBatch : batch,
      lowWater: low === 0 ? Math.floor((batch === 0 ? defaultBatch : batch) / 2) : Math.max(low, 0),
      autoBatch: batch === 0,
      autoLow: low === 0,
      backoffMs,
      closeSignal: this.closer.signal,
      request: (namespace, count) => client.nextRPC(namespace, count, undefined),
      track: (p) => {
        client.refills.add(p);
        const drop = (): void => {
          client.refills.delete(p);
        };
        p.then(drop, drop);
      },
    };
  }

  /**
   * Returns an ID of the namespace as a bigint: from its buffer when it holds
   * one (no network), else after waiting for a refill. Rejects with a
   * RefusedError subclass (unknown namespace, token refused, bad request, a text
   * namespace), an UnavailableError (every server failed), a ClosedError, or
   * the reason of the call's signal.
   */
  next(namespace: string, call?: CallOptions): Promise<bigint> {
    try {
      return this.ns(namespace).ints.next(waitOf(call));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Returns count IDs of the namespace, in the order the buffer holds them, taking
   * as many refills as they need. If the call fails midway, the IDs it had taken
   * are dropped (never handed out later).
   */
  nextMany(namespace: string, count: number, call?: CallOptions): Promise<bigint[]> {
    if (!Number.isSafeInteger(count) || count < 1) {
      return Promise.reject(new OptionsError(`count ${count} is not a whole number of 1 or more`));
    }
    try {
      return this.ns(namespace).ints.take(count, waitOf(call));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Returns a text ID (uuidv7, objectid) of the namespace, buffered as next does. */
  nextText(namespace: string, call?: CallOptions): Promise<string> {
    try {
      return this.ns(namespace).texts.next(waitOf(call));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** How many IDs the namespace's buffers hold now. */
  buffered(namespace: string): number {
    const ns = this.namespaces.get(namespace);
    return ns === undefined ? 0 : ns.ints.remaining() + ns.texts.remaining();
  }

  /**
   * Asks a server for count IDs of the namespace, with failover, bypassing the
   * buffer: integer IDs in ids, text IDs in textIds. count is at most the
   * servers' max_count (100,000 unless configured).
   */
  async fetch(namespace: string, count: number, call?: CallOptions): Promise<Fetched> {
    if (!Number.isSafeInteger(count) || count < 1 || count > 2 ** 32 - 1) {
      throw new OptionsError(`count ${count} is out of range; ask for 1 or more, at most the servers' max_count`);
    }
    this.open();
    const { answer } = await this.withCall(namespace, call, (signal) => this.nextRPC(namespace, count, signal));
    return { ids: answer.ids, textIds: answer.textIds };
  }

  /**
   * Asks a server to take an ID of the namespace apart, per the namespace's real
   * layout and epoch, with failover. Give integer IDs as bigint or as decimal
   * strings, text IDs as strings.
   */
  async decode(namespace: string, id: bigint | string, call?: CallOptions): Promise<Decoded> {
    this.open();
    const text = typeof id === "bigint" ? id.toString() : id;
    const m = await this.withCall(namespace, call, (signal) =>
      this.failover(namespace, signal, (s, sig) =>
        unary(this.fetchFn, s.url, "Decode", { namespace, id: text }, this.tokenFor(namespace), sig)));
    return decodedOf(m);
  }

  /**
   * Asks a server to describe its namespaces (all when namespace is empty), with
   * failover. A server shows only the namespaces the client's token opens.
   */
  async info(namespace = "", call?: CallOptions): Promise<Info> {
    this.open();
    const m = await this.withCall(namespace, call, (signal) =>
      this.failover(namespace, signal, (s, sig) =>
        unary(this.fetchFn, s.url, "Info", { namespace }, this.tokenFor(namespace), sig)));
    return infoOf(m);
  }

  /**
   * The layout of a snowflake or redis namespace's IDs, from the server's info
   * (asked once per namespace, then kept), to take IDs apart without asking a
   * server (layout.decode(id)); null for namespaces without one (segment,
   * uuidv7, objectid).
   */
  layout(namespace: string, call?: CallOptions): Promise<Layout | null> {
    let p = this.layouts.get(namespace);
    if (p === undefined) {
      p = this.info(namespace, call).then((info) => {
        const text = info.namespaces.find((n) => n.name === namespace)?.layout?.text ?? "";
        return text === "" ? null : Layout.parse(text);
      });
      this.layouts.set(namespace, p);
      p.catch(() => this.layouts.delete(namespace));
    }
    return p;
  }

  /** Each server's counters, in the order of the servers option. */
  stats(): ServerStats[] {
    return this.servers.map((s, i) => ({
      url: s.url,
      region: this.regions[i]!.region,
      requests: s.requests,
      failures: s.failures,
      hedges: s.hedges,
      hedgesWon: s.hedgesWon,
      outHedged: s.outHedged,
      hedgeDelayMs: this.hedgeDelay(s),
      downUntil: s.downUntil > Date.now() ? new Date(s.downUntil) : null,
      lastError: s.lastError,
    }));
  }

  /**
   * Aborts the requests in flight, drops every buffered ID (IDs fetched but not
   * handed out are lost: never handed out later or twice), and resolves when the
   * background refills have ended. Calls after close reject with ClosedError.
   * Calling it again does nothing more.
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const ns of this.namespaces.values()) {
        ns.ints.close();
        ns.texts.close();
      }
      this.closer.abort(new ClosedError());
    }
    await Promise.allSettled([...this.refills]);
  }

  private ns(name: string): Namespace {
    let ns = this.namespaces.get(name);
    if (ns === undefined) {
      ns = { ints: new IDBuffer<bigint>(this.host, name, "int"), texts: new IDBuffer<string>(this.host, name, "text") };
      if (this.closed) {
        ns.ints.close();
        ns.texts.close();
      }
      this.namespaces.set(name, ns);
    }
    return ns;
  }

  private open(): void {
    if (this.closed) {
      throw new ClosedError();
    }
  }

  private tokenFor(namespace: string): string {
    return this.tokens.get(namespace) ?? this.token;
  }

  /**
   * Runs an unbuffered call under the caller's signal and timeoutMs: when
   * either ends, the call's requests are aborted and it rejects with the
   * signal's reason, or a TimeoutError.
   */
  private async withCall<T>(namespace: string, call: CallOptions | undefined, run: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    if (call?.timeoutMs === undefined) {
      return run(call?.signal);
    }
    const ctl = new AbortController();
    const onAbort = (): void => ctl.abort(call.signal?.reason);
    if (call.signal?.aborted) {
      ctl.abort(call.signal.reason);
    }
    call.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => ctl.abort(callTimeout(namespace, call.timeoutMs ?? 0)), call.timeoutMs);
    try {
      return await run(ctl.signal);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Asks for count IDs with failover and hedging; signal is the caller's, if any. */
  private nextRPC(namespace: string, count: number, signal: AbortSignal | undefined): Promise<{ answer: NextAnswer; server: string }> {
    return this.failover(namespace, signal, async (s, sig) => {
      await this.mixFor(namespace)?.vet(this.servers.indexOf(s));
      const m = await unary(this.fetchFn, s.url, "Next", { namespace, count, packedIds: true }, this.tokenFor(namespace), sig);
      return { answer: parseNext(m, count), server: s.url };
    });
  }

  /** The namespace's MixCheck, made on first use; undefined with one server. */
  private mixFor(namespace: string): MixCheck | undefined {
    if (this.servers.length < 2) {
      return undefined;
    }
    let m = this.mixes.get(namespace);
    if (m === undefined) {
      m = new MixCheck(namespace, this.servers.map((s) => s.url), async (k) => {
        const ctl = new AbortController();
        const timer = setTimeout(() => ctl.abort(new Error(`no answer within ${this.timeoutMs} ms (the timeoutMs option)`)), this.timeoutMs);
        const onClose = (): void => ctl.abort(new ClosedError());
        this.closer.signal.addEventListener("abort", onClose, { once: true });
        try {
          return infoOf(await unary(this.fetchFn, this.servers[k]!.url, "Info", { namespace }, this.tokenFor(namespace), ctl.signal));
        } finally {
          clearTimeout(timer);
          this.closer.signal.removeEventListener("abort", onClose);
        }
      });
      this.mixes.set(namespace, m);
    }
    return m;
  }

  /**
   * Runs call against the servers in failover order (see order) and resolves
   * with the first answer. A server that fails makes the next one asked at once;
   * a server that has not answered within its hedge delay makes the next one
   * asked too (a hedge), its own request still running. The first answer wins,
   * and the requests still running are aborted, their answers dropped; those
   * asked before the winner were out-hedged and are passed over as failed ones
   * are. A refusal that another server would repeat rejects at once; so does the
   * end of the caller's signal (with its reason) or close (ClosedError); else,
   * once every server failed, an UnavailableError lists every attempt.
   */
  private failover<T>(namespace: string, signal: AbortSignal | undefined, call: (s: ServerState, signal: AbortSignal) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const order = this.order(Date.now());
      const n = order.length;
      interface Request {
        readonly server: ServerState;
        readonly start: number;
        readonly hedge: boolean;
        readonly ctl: AbortController;
        readonly timer: ReturnType<typeof setTimeout>;
        readonly timeout: Error; // the reason its timer aborts it with
        running: boolean;
      }
      const reqs: Request[] = [];
      const attempts: Attempt[] = [];
      let inflight = 0;
      let hedgeTimer: ReturnType<typeof setTimeout> | undefined;
      let done = false;
      const closeSignal = this.closer.signal;

      const finish = (): void => {
        done = true;
        if (hedgeTimer !== undefined) {
          clearTimeout(hedgeTimer);
        }
        for (const r of reqs) {
          clearTimeout(r.timer);
          if (r.running) {
            r.ctl.abort(new Error("the call ended before this server answered"));
          }
        }
        signal?.removeEventListener("abort", onAbort);
        closeSignal.removeEventListener("abort", onClose);
      };
      const onAbort = (): void => {
        if (!done) {
          finish();
          reject(signal!.reason);
        }
      };
      const onClose = (): void => {
        if (!done) {
          finish();
          reject(new ClosedError());
        }
      };
      if (closeSignal.aborted) {
        reject(new ClosedError());
        return;
      }
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      closeSignal.addEventListener("abort", onClose, { once: true });

      const launch = (asHedge: boolean): void => {
        const k = reqs.length;
        const s = this.servers[order[k]!]!;
        const ctl = new AbortController();
        const timeout = new Error(`no answer within ${this.timeoutMs} ms (the timeoutMs option)`);
        const r: Request = {
          server: s,
          start: performance.now(),
          hedge: asHedge,
          ctl,
          timer: setTimeout(() => ctl.abort(timeout), this.timeoutMs),
          timeout,
          running: true,
        };
        reqs.push(r);
        inflight++;
        s.requests++;
        if (asHedge) {
          s.hedges++;
        }
        call(s, ctl.signal).then(
          (v) => settle(k, v, null),
          (e: unknown) => settle(k, undefined, e instanceof Error ? e : new Error(String(e))),
        );
        if (hedgeTimer !== undefined) {
          clearTimeout(hedgeTimer);
          hedgeTimer = undefined;
        }
        const d = this.hedgeDelay(s);
        // A hedge stays in the server's region (ClientOptions.remote).
        if (d > 0 && k + 1 < n && this.regions[order[k + 1]!]!.tier === this.regions[order[k]!]!.tier) {
          hedgeTimer = setTimeout(() => {
            hedgeTimer = undefined;
            if (!done && reqs.length < n) {
              launch(true);
            }
          }, d);
        }
      };

      const settle = (k: number, v: T | undefined, err: Error | null): void => {
        if (done) {
          return; // a loser: its answer is dropped
        }
        const r = reqs[k]!;
        r.running = false;
        clearTimeout(r.timer);
        inflight--;
        const s = r.server;
        if (err === null) {
          s.lat.record(performance.now() - r.start);
          s.ok();
          if (r.hedge) {
            s.hedgesWon++;
          }
          this.last = order[k]!;
          const now = performance.now();
          for (const q of reqs.slice(0, k)) {
            if (q.running) {
              q.server.outHedge(s.url, now - q.start, this.host.backoffMs, this.maxBackoffMs);
            }
          }
          finish();
          resolve(v as T);
          return;
        }
        if (r.ctl.signal.aborted && r.ctl.signal.reason === r.timeout) {
          err = r.timeout;
        }
        const ref = refusal(err, namespace, s.url);
        if (ref !== null) {
          finish();
          reject(ref);
          return;
        }
        s.fail(err, this.host.backoffMs, this.maxBackoffMs);
        attempts.push({ server: s.url, error: err });
        if (reqs.length < n) {
          launch(false);
        } else if (inflight === 0) {
          finish();
          reject(new UnavailableError(namespace, attempts));
        }
      };

      launch(false);
    });
  }

  /**
   * The servers' indexes in failover order (regionOrder): those in use, local
   * region first, starting from the last that answered, then those passed over
   * (after a failure or an out-hedged request), soonest back first. A call never
   * gives up without asking each server once.
   */
  private order(now: number): number[] {
    return regionOrder(
      this.servers.map((s, i) => ({ tier: this.regions[i]!.tier, downUntil: s.downUntil, isDown: (t: number) => s.isDown(t) })),
      this.last,
      now,
    );
  }

  /**
   * How long a request to s waits for an answer before the next server is asked
   * too: the percentile of s's round trips within the bounds, the upper bound
   * before its first answer, and 0 when hedging is off.
   */
  private hedgeDelay(s: ServerState): number {
    if (!this.hedge) {
      return 0;
    }
    const p = s.lat.p;
    return p === 0 ? this.hedgeMax : Math.min(Math.max(p, this.hedgeMin), this.hedgeMax);
  }
}

function waitOf(call: CallOptions | undefined): Wait {
  if (call === undefined) {
    return {};
  }
  const t = call.timeoutMs;
  if (t !== undefined && (typeof t !== "number" || !(t >= 0))) {
    throw new OptionsError(`timeoutMs ${t} is not a number of milliseconds of 0 or more`);
  }
  return { signal: call.signal, deadline: t === undefined ? undefined : performance.now() + t, timeoutMs: t };
}

/**
 * The error to give the caller at once when err is a refusal that failover
 * cannot fix (another server would say the same), else null.
 */
function refusal(err: Error, namespace: string, server: string): RefusedError | MixError | null {
  if (err instanceof RefusedError || err instanceof MixError) {
    return err;
  }
  if (!(err instanceof ServerError)) {
    return null;
  }
  switch (err.connectCode) {
    case "not_found":
      return new UnknownNamespaceError(namespace, server, err.message, err);
    case "unauthenticated":
    case "permission_denied":
      return new UnauthorizedError(namespace, server, err.message, err);
    case "invalid_argument":
    case "out_of_range":
      return new BadRequestError(namespace, server, err.message, err);
    default:
      return null;
  }
}
