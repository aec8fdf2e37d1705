// The client refuses to mix servers that can issue the same IDs: two `flurry
// serve` on the embedded default, each with its own data directory, are refused
// with a MixError naming both; two that lease from one store are mixed.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client, MixError } from "../src/index.js";
import { cleanup, flurryBinary, required, startServe, startServeDefault, tempDir, type Serve } from "./harness.js";

const bounded = { timeout: 90_000 };

let skip: string | false = false;
let d1: Serve;
let d2: Serve;
let s1: Serve;
let s2: Serve;
const clients: Client[] = [];

before(async () => {
  const got = await flurryBinary();
  if ("skip" in got) {
    if (required) {
      throw new Error(`${got.skip}; FLURRY_TEST_REQUIRE=1 makes this a failure`);
    }
    skip = got.skip;
    return;
  }
  const leaseDir = tempDir("leases");
  [d1, d2, s1, s2] = await Promise.all([startServeDefault(got.bin), startServeDefault(got.bin), startServe(got.bin, leaseDir), startServe(got.bin, leaseDir)]);
}, { timeout: 600_000 });

after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await cleanup();
});

/** Takes up to n IDs of namespace from each of two clients (one given x then y, the other y then x). */
async function load(x: Serve, y: Serve, namespace: string, n: number): Promise<{ ids: number; dups: number; errors: unknown[] }> {
  const seen = new Set<bigint>();
  let ids = 0;
  let dups = 0;
  const errors = await Promise.all([[x.url, y.url], [y.url, x.url]].map(async (servers) => {
    const c = new Client({ servers, batch: 1000 });
    clients.push(c);
    try {
      for (let i = 0; i < n; i++) {
        const id = await c.next(namespace);
        ids++;
        if (seen.has(id)) {
          dups++;
        }
        seen.add(id);
      }
      return null;
    } catch (e) {
      return e;
    }
  }));
  return { ids, dups, errors };
}

describe("servers that can issue the same IDs", () => {
  for (const ns of ["default", "segment"]) {
    test(`two servers on the defaults: ${ns} refused with a MixError naming both`, bounded, async (t) => {
      if (skip) return t.skip(skip);
      const { ids, dups, errors } = await load(d1, d2, ns, 50_000);
      t.diagnostic(`${ids} IDs, ${dups} duplicates`);
      assert.equal(dups, 0, `${dups} duplicate IDs in ${ids}`);
      for (const [k, e] of errors.entries()) {
        assert.ok(e instanceof MixError, `client ${k}: ${String(e)}`);
        assert.equal(e.code, "mixed");
        assert.equal(e.namespace, ns);
        assert.deepEqual([e.first, e.second], k === 0 ? [d1.url, d2.url] : [d2.url, d1.url]);
        assert.ok(e.message.includes(d1.url) && e.message.includes(d2.url) && e.reason.includes("only it can use"), e.message);
      }
    });
  }

  test("two servers on one lease store: mixed, no duplicate", bounded, async (t) => {
    if (skip) return t.skip(skip);
    const { ids, dups, errors } = await load(s1, s2, "default", 50_000);
    assert.deepEqual(errors, [null, null]);
    assert.equal(ids, 100_000);
    assert.equal(dups, 0);
  });
});
