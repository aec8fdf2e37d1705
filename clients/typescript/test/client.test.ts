// The client against real `flurry serve` processes: uniqueness under many
// concurrent callers, exact 64-bit IDs, failover when a server is killed,
// hedging around a server that stopped answering, timeouts on a listener that
// never answers, and the typed errors. Every loop is bounded in count and time,
// and after() stops every process the tests started.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  BadRequestError,
  Client,
  ClosedError,
  Layout,
  OptionsError,
  RefusedError,
  UnauthorizedError,
  UnavailableError,
  UnknownNamespaceError,
  WrongKindError,
  type ClientOptions,
} from "../src/index.js";
import { cleanup, flurryBinary, freePort, required, secretToken, startHung, startServe, tempDir, type Serve } from "./harness.js";

/** Every test ends by itself: a hang is a failure, not a stuck run. */
const bounded = { timeout: 90_000 };

let bin = "";
let skip: string | false = false;
let leaseDir = "";
let a: Serve;
let b: Serve;
const clients: Client[] = [];

/** A client closed by after(), so that no test leaves requests running. */
function client(opts: ClientOptions): Client {
  const c = new Client(opts);
  clients.push(c);
  return c;
}

before(async () => {
  const got = await flurryBinary();
  if ("skip" in got) {
    if (required) {
      throw new Error(`${got.skip}; FLURRY_TEST_REQUIRE=1 makes this a failure`);
    }
    skip = got.skip;
    return;
  }
  bin = got.bin;
  leaseDir = tempDir("leases");
  [a, b] = await Promise.all([startServe(bin, leaseDir), startServe(bin, leaseDir)]);
}, { timeout: 600_000 }); // a cold build of flurry takes minutes

after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await cleanup();
});

function unique(ids: Iterable<bigint>): number {
  return new Set(ids).size;
}

function increasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i]! <= ids[i - 1]!) {
      return false;
    }
  }
  return true;
}

describe("against a real flurry serve", () => {
  test("100,000 IDs to 64 concurrent callers: none twice, each caller's increasing", bounded, async (t) => {
    if (skip) return t.skip(skip);
    // timeoutMs well above what a loaded machine takes: this test is about the buffer.
    const c = client({ servers: [a.url], timeoutMs: 30_000 });
    const total = 100_000;
    const callers = 64;
    let taken = 0;
    const got: bigint[][] = Array.from({ length: callers }, () => []);
    await Promise.all(got.map(async (mine, w) => {
      while (taken < total) {
        // A quarter of the callers take ten at a time.
        if (w % 4 === 0 && total - taken >= 10) {
          taken += 10;
          mine.push(...(await c.nextMany("default", 10)));
        } else {
          taken++;
          mine.push(await c.next("default"));
        }
      }
    }));
    const all = got.flat();
    assert.equal(all.length, total);
    assert.equal(unique(all), total, "an ID was handed out twice");
    for (const [w, mine] of got.entries()) {
      // One server node issues increasing IDs and the buffer hands them out in
      // order, so what one caller took one after another increases.
      assert.ok(increasing(mine), `caller ${w}'s IDs do not increase`);
    }
    assert.ok(all.every((id) => id > 2n ** 53n), "the default layout's IDs of today are above 2^53");
    const st = c.stats()[0]!;
    assert.equal(st.failures, 0, `failures: ${st.lastError?.message}`);
    t.diagnostic(`${st.requests} requests for ${total} IDs`);
  });

  test("segment IDs through the buffer: consecutive, none twice", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const c = client({ servers: [a.url], batch: 100, lowWater: 30 });
    const ids = await c.nextMany("segment", 1000);
    assert.equal(unique(ids), 1000);
    assert.ok(increasing(ids));
    // One server, one allocator: each batch of 100 is a contiguous range.
    for (let i = 0; i < ids.length; i += 100) {
      assert.equal(ids[i + 99]! - ids[i]!, 99n, `batch at ${i} is not one range`);
    }
  });

  test("IDs above 2^53 are exact: equal to what the server's decode and the layout say", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const c = client({ servers: [a.url] });
    for (const ns of ["default", "twitter"]) {
      const ids = await c.nextMany(ns, 2000);
      assert.ok(ids[0]! > 2n ** 53n, `${ns}: ${ids[0]} is not above 2^53`);
      // Consecutive IDs that a JavaScript number cannot tell apart: a client that
      // parsed them as numbers would hand out duplicates.
      const collide = ids.some((id, i) => i > 0 && Number(id) === Number(ids[i - 1]!));
      assert.ok(collide, `${ns}: no two IDs round to the same number; the test proves nothing`);
      const layout = await c.layout(ns);
      assert.ok(layout instanceof Layout, `${ns} has no layout`);
      for (const id of [ids[0]!, ids[1]!, ids[ids.length - 1]!]) {
        const d = await c.decode(ns, id);
        assert.equal(d.id, id.toString(), "the server's decode names another ID");
        assert.equal(BigInt(d.id), id);
        const local = layout.decode(id);
        assert.deepEqual(local.fields, d.fields, `${ns}: fields of ${id}`);
        assert.equal(local.sequence, d.sequence, `${ns}: sequence of ${id}`);
        assert.equal(local.time.getTime(), d.time?.getTime(), `${ns}: time of ${id}`);
        assert.equal(d.strategy, "snowflake");
      }
      if (ns === "twitter") {
        assert.equal(layout.toString(), Layout.parse("twitter").toString());
        assert.deepEqual(layout.decode(ids[0]!).fields[0], { name: "datacenter", value: 1n });
      }
    }
  });

  test("failover: the server in use is killed mid-run; no caller sees an error, no ID twice", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const victim = await startServe(bin, leaseDir);
    const c = client({ servers: [victim.url, b.url], batch: 200 });
    const total = 60_000;
    const callers = 8;
    let taken = 0;
    let killed: Promise<void> | undefined;
    const got: bigint[][] = Array.from({ length: callers }, () => []);
    await Promise.all(got.map(async (mine) => {
      while (taken < total) {
        taken++;
        mine.push(await c.next("default"));
        if (killed === undefined && taken >= total / 3) {
          killed = victim.signal("SIGKILL");
        }
      }
    }));
    await killed;
    const all = got.flat();
    assert.equal(unique(all), total, "an ID was handed out twice");
    const [sv, sb] = c.stats();
    t.diagnostic(`killed: ${JSON.stringify({ ...sv, lastError: sv!.lastError?.message })}`);
    t.diagnostic(`other: ${JSON.stringify({ ...sb, lastError: sb!.lastError?.message })}`);
    assert.ok(sv!.requests > 0 && sb!.requests > 0, "not both servers served");
    assert.ok(sv!.failures + sv!.outHedged > 0, "the killed server was never given up on");
  });

  test("a stopped server (SIGSTOP): the refill is hedged to the next, no timeout waited for", bounded, async (t) => {
    if (skip) return t.skip(skip);
    // hedgeMaxDelayMs: time for the first answer of a busy machine, which sets the
    // server's hedge delay (its round trips' 95th percentile) for what follows.
    const c = client({ servers: [a.url, b.url], batch: 100, lowWater: 50, timeoutMs: 3_600_000, hedgeMaxDelayMs: 5000 });
    await c.nextMany("default", 10);
    assert.deepEqual(c.stats().map((s) => s.requests), [1, 0], "the first server did not answer alone");
    await a.signal("SIGSTOP");
    try {
      // Drain well past several refills: with timeoutMs at an hour, only a
      // hedge can move the client on.
      const ids = await c.nextMany("default", 1000, { timeoutMs: 60_000 });
      assert.equal(unique(ids), 1000);
    } finally {
      await a.signal("SIGCONT");
    }
    const [sa, sb] = c.stats();
    assert.ok(sb!.hedgesWon >= 1, `no hedge to the second server won: ${JSON.stringify(sb)}`);
    assert.ok(sa!.outHedged >= 1, "the stopped server was not out-hedged");
    assert.equal(sa!.failures, 0, "the stopped server failed: only a hedge should have moved the client");
  });

  test("a listener that never answers: timeoutMs ends the request, the next server answers", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const hung = await startHung();
    const c = client({ servers: [hung.url, a.url], noHedge: true, timeoutMs: 300 });
    const id = await c.next("default");
    assert.equal(typeof id, "bigint");
    const [sh, sa] = c.stats();
    assert.equal(sh!.failures, 1);
    assert.match(sh!.lastError?.message ?? "", /no answer within 300 ms/);
    assert.equal(sa!.failures, 0);
    assert.ok(hung.accepted() >= 1, "the hung listener was never asked");
  });

  test("a listener that never answers: a hedge answers long before timeoutMs", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const hung = await startHung();
    const c = client({ servers: [hung.url, a.url], timeoutMs: 3_600_000 });
    const calls = 10;
    for (let i = 0; i < calls; i++) {
      await c.fetch("default", 10, { timeoutMs: 60_000 });
    }
    const [sh, sa] = c.stats();
    assert.equal(sh!.failures, 0);
    assert.ok(sh!.outHedged >= 1, "the hung server was not out-hedged");
    assert.ok(sa!.hedgesWon >= 1, "no hedge won");
    // Once out-hedged it is passed over, asked again only as a hedge of a call
    // slower than the live server's own round trips.
    assert.ok(sh!.requests < calls, `the hung server was asked in each of ${calls} calls`);
  });

  test("only a listener that never answers: UnavailableError after timeoutMs; the caller's own bounds", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const hung = await startHung();
    const c = client({ servers: [hung.url], timeoutMs: 300 });
    await assert.rejects(c.next("default"), (e: unknown) => {
      assert.ok(e instanceof UnavailableError, String(e));
      assert.equal(e.code, "unavailable");
      assert.equal(e.attempts.length, 1);
      assert.match(e.attempts[0]!.error.message, /no answer within 300 ms/);
      assert.match(e.message, /check that the servers run and are reachable/);
      return true;
    });
    const slow = client({ servers: [hung.url], timeoutMs: 3_600_000 });
    await assert.rejects(slow.next("default", { timeoutMs: 200 }), { name: "TimeoutError" });
    await assert.rejects(slow.next("default", { signal: AbortSignal.timeout(200) }), { name: "TimeoutError" });
    const ctl = new AbortController();
    const p = slow.fetch("default", 5, { signal: ctl.signal });
    ctl.abort();
    await assert.rejects(p, { name: "AbortError" });
    await assert.rejects(slow.decode("default", 1n, { timeoutMs: 100 }), { name: "TimeoutError" });
  });

  test("every server down: UnavailableError lists each attempt", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const dead = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    const c = client({ servers: dead });
    await assert.rejects(c.next("default"), (e: unknown) => {
      assert.ok(e instanceof UnavailableError, String(e));
      assert.deepEqual(e.attempts.map((x) => x.server), dead.map((d) => `http://${d}`));
      return true;
    });
  });

  test("refusals are typed, say what to do, and are not failed over", bounded, async (t) => {
    if (skip) return t.skip(skip);
    // No hedges: the second server is asked only if the first is failed over.
    const c = client({ servers: [a.url, b.url], noHedge: true });
    await assert.rejects(c.next("nope"), (e: unknown) => {
      assert.ok(e instanceof UnknownNamespaceError && e instanceof RefusedError, String(e));
      assert.equal(e.code, "unknown_namespace");
      assert.equal(e.namespace, "nope");
      assert.match(e.message, /unknown namespace "nope"/);
      assert.match(e.message, /check the namespace's name/);
      return true;
    });
    assert.equal(c.stats()[1]!.requests, 0, "an unknown namespace was failed over");
    assert.equal(c.stats()[0]!.failures, 0);

    await assert.rejects(c.next("secret"), (e: unknown) => {
      assert.ok(e instanceof UnauthorizedError, String(e));
      assert.equal(e.code, "unauthorized");
      assert.match(e.message, /pass a token the namespace accepts/);
      return true;
    });
    const wrong = client({ servers: [a.url], token: "not-the-token-of-this-namespace" });
    await assert.rejects(wrong.next("secret"), UnauthorizedError);
    const right = client({ servers: [a.url], token: "the-other-namespaces-need-none", tokens: { secret: secretToken } });
    assert.equal(typeof (await right.next("secret")), "bigint");

    const big = client({ servers: [a.url], batch: 500 });
    await assert.rejects(big.next("small"), (e: unknown) => {
      assert.ok(e instanceof BadRequestError, String(e));
      assert.equal(e.code, "bad_request");
      assert.match(e.message, /max_count 100/);
      assert.match(e.message, /ask for fewer IDs at once/);
      return true;
    });
    const fits = client({ servers: [a.url], batch: 100 });
    assert.equal((await fits.nextMany("small", 250)).length, 250);

    await assert.rejects(c.nextText("default"), WrongKindError);
    await assert.rejects(c.next("sessions"), (e: unknown) => {
      assert.ok(e instanceof WrongKindError, String(e));
      assert.match(e.message, /use nextText/);
      return true;
    });
    const s = await c.nextText("sessions");
    assert.match(s, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await assert.rejects(c.decode("default", "not-an-id"), BadRequestError);
  });

  test("info and layout", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const c = client({ servers: [a.url] });
    const info = await c.info();
    const names = info.namespaces.map((n) => n.name);
    assert.ok(names.includes("default") && names.includes("segment") && !names.includes("secret"), names.join(","));
    const def = info.namespaces.find((n) => n.name === "default")!;
    assert.equal(def.strategy, "snowflake");
    assert.equal(def.layout?.text, "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16");
    assert.equal(def.lease?.state, "held");
    assert.equal(await c.layout("segment"), null);
    const seg = (await c.info("segment")).namespaces[0]!;
    assert.equal(typeof seg.segment?.currentLast, "bigint");
  });

  test("close: buffered IDs dropped, calls after it rejected", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const c = new Client({ servers: [a.url], batch: 50 });
    await c.next("default");
    assert.ok(c.buffered("default") > 0);
    await c.close();
    assert.equal(c.buffered("default"), 0);
    await assert.rejects(c.next("default"), ClosedError);
    await assert.rejects(c.fetch("default", 1), ClosedError);
    await c.close(); // again: nothing more

    // A close while a refill is stuck on a silent server ends the wait at once.
    const hung = await startHung();
    const h = new Client({ servers: [hung.url], timeoutMs: 3_600_000 });
    const p = h.next("default");
    await new Promise((r) => setTimeout(r, 50));
    await h.close();
    await assert.rejects(p, ClosedError);
  });
});

describe("options", () => {
  test("are checked before any server is contacted", bounded, () => {
    assert.throws(() => new Client({ servers: [] }), OptionsError);
    assert.throws(() => new Client({ servers: ["ftp://x:1"] }), /not http or https/);
    assert.throws(() => new Client({ servers: ["http://user:pw@x:1"] }), /token option/);
    assert.throws(() => new Client({ servers: ["http://x:1/?a=b"] }), /query or fragment/);
    assert.throws(() => new Client({ servers: ["x:1", "http://x:1/"] }), /listed twice/);
    assert.throws(() => new Client({ servers: ["x:1"], batch: -1 }), /batch/);
    assert.throws(() => new Client({ servers: ["x:1"], backoffMs: 500, maxBackoffMs: 100 }), /below backoffMs/);
    assert.throws(() => new Client({ servers: ["x:1"], hedgeMinDelayMs: 50, hedgeMaxDelayMs: 20 }), /below hedgeMinDelayMs/);
    const c = new Client({ servers: ["127.0.0.1:1"] });
    assert.deepEqual(c.stats().map((s) => s.url), ["http://127.0.0.1:1"]);
    void c.close();
  });
});
