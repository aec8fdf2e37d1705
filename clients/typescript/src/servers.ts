// Each server's state as the client sees it: its counters, its failures in a row
// and how long it is passed over, and its recent round trips, from which its
// hedge delay follows.

import { OptionsError } from "./errors.js";

/**
 * The hedge delay of a server is a high percentile of its recent successful round
 * trips: a request slower than nearly all of them is more likely stuck (a dead
 * process, a dropped route) than slow, and asking another server then costs one
 * request while waiting costs up to timeoutMs. The 95th percentile of 64 samples
 * ignores three outliers (a garbage collection, a busy neighbour) and follows a
 * change of the server's speed within 64 requests.
 */
const latencyWindow = 64;
const hedgePercentile = 0.95;

/** A server's last successful round trips and their percentile. */
export class Latency {
  private readonly ring: number[] = [];
  private n = 0;
  /** The percentile of the samples in milliseconds; 0 before the first. */
  p = 0;

  /** Adds one successful round trip, in milliseconds. */
  record(ms: number): void {
    this.ring[this.n % latencyWindow] = Math.max(ms, 0.001);
    this.n++;
    const s = this.ring.slice().sort((a, b) => a - b);
    this.p = s[Math.ceil(hedgePercentile * s.length) - 1]!;
  }
}

/** One server and its failure state. */
export class ServerState {
  readonly url: string;
  requests = 0;
  failures = 0;
  hedges = 0;
  hedgesWon = 0;
  outHedged = 0;
  readonly lat = new Latency();
  inARow = 0;
  /** Passed over until then (Date.now() milliseconds); 0 when in use. */
  downUntil = 0;
  lastError: Error | null = null;

  constructor(url: string) {
    this.url = url;
  }

  isDown(now: number): boolean {
    return now < this.downUntil;
  }

  ok(): void {
    this.inARow = 0;
    this.downUntil = 0;
    this.lastError = null;
  }

  /** Marks the server down after a failed request (see down). */
  fail(err: Error, base: number, max: number): void {
    this.failures++;
    this.down(base, max);
    this.lastError = err;
  }

  /**
   * Marks the server down as fail does, for a request of it that a hedge to
   * winner answered first after it had run for waitedMs. It counts in outHedged,
   * not failures: the server did not fail, it did not answer in time.
   */
  outHedge(winner: string, waitedMs: number, base: number, max: number): void {
    this.outHedged++;
    this.down(base, max);
    this.lastError = new Error(`no answer within ${waitedMs.toFixed(1)} ms; a hedge to ${winner} answered first`);
  }

  /**
   * Passes the server over for base·2^(failures in a row − 1), capped at max, less
   * a random jitter of up to half, so that clients that saw one outage do not all
   * come back at the same instant.
   */
  private down(base: number, max: number): void {
    this.inARow++;
    let d = base;
    for (let i = 1; i < this.inARow && d < max; i++) {
      d *= 2;
    }
    d = Math.min(d, max);
    d -= Math.random() * (d / 2);
    this.downUntil = Date.now() + d;
  }
}

/**
 * Checks one server address and returns its base URL: a bare host:port gets
 * http://, a trailing slash is dropped. It refuses a scheme other than http or
 * https, a missing host, user information (pass tokens with the token option,
 * never in a URL), a query and a fragment.
 */
export function normalizeServer(s: string): string {
  const raw = s.trim();
  if (raw === "") {
    throw new OptionsError("empty server address; give one such as http://127.0.0.1:8080");
  }
  let u: URL;
  try {
    u = new URL(raw.includes("://") ? raw : `http://${raw}`);
  } catch {
    throw new OptionsError(`server ${JSON.stringify(s)} is not a URL; give one such as http://127.0.0.1:8080`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new OptionsError(`server ${JSON.stringify(s)}: scheme ${JSON.stringify(u.protocol.replace(/:$/, ""))} is not http or https`);
  }
  if (u.hostname === "") {
    throw new OptionsError(`server ${JSON.stringify(s)} has no host; give one such as http://127.0.0.1:8080`);
  }
  if (u.username !== "" || u.password !== "") {
    throw new OptionsError(`server ${JSON.stringify(`${u.protocol}//${u.host}${u.pathname}`)} holds user information; pass a token with the token option instead`);
  }
  if (u.search !== "" || u.hash !== "" || raw.includes("?") || raw.includes("#")) {
    throw new OptionsError(`server ${JSON.stringify(s)} has a query or fragment; give only scheme, host, port and path`);
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
}
