// The client across two regions, each two real `flurry serve` processes with
// their own lease store and region value (docs/multi-region.md): local servers
// first; all of them killed, the remote region serves; the local ones back, the
// client returns after its backoff. Every loop is bounded in count and time,
// and after() stops every process the test started.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, Layout, OptionsError } from "../src/index.js";
import { regionOrder } from "../src/regions.js";
import { cleanup, flurryBinary, freePort, required, spawnServe, tempDir, type Serve } from "./harness.js";

let bin = "";
let skip: string | false = false;

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
}, { timeout: 600_000 });

after(cleanup);

/** A region's server: its configuration file and port, so it can start again. */
interface RegionServe {
  conf: string;
  port: number;
  serve: Serve;
}

async function startRegion(name: string, value: number, registry: string, leases: string): Promise<RegionServe> {
  const dir = tempDir(`region-${name}`);
  const port = await freePort();
  const conf = join(dir, "flurry.yaml");
  writeFileSync(conf, `listen: 127.0.0.1:${port}
data_dir: ${join(dir, "data")}
region: {name: ${name}, value: ${value}, registry: "file://${registry}"}
namespaces:
  orders:
    strategy: snowflake
    snowflake: {layout: twitter, lease: {store: "file://${leases}"}}
`);
  return { conf, port, serve: await spawnServe(bin, ["serve", "--config", conf], port) };
}

test("local region first, the remote one when every local server fails, back after the backoff", { timeout: 180_000 }, async (t) => {
  if (skip !== false) {
    t.skip(skip);
    return;
  }
  const registry = tempDir("registry");
  const euLeases = tempDir("eu-leases");
  const usLeases = tempDir("us-leases");
  const eu = await Promise.all([startRegion("eu-west", 1, registry, euLeases), startRegion("eu-west", 1, registry, euLeases)]);
  const us = await Promise.all([startRegion("us-east", 2, registry, usLeases), startRegion("us-east", 2, registry, usLeases)]);
  const c = new Client({
    servers: eu.map((s) => s.serve.url),
    remote: [{ name: "us-east", servers: us.map((s) => s.serve.url) }],
    batch: 50,
    timeoutMs: 1000,
    backoffMs: 100,
    maxBackoffMs: 400,
  });
  try {
    const twitter = Layout.parse("twitter");
    const seen = new Set<bigint>();
    const datacenter = async (): Promise<bigint> => {
      const id = await c.next("orders");
      assert.ok(!seen.has(id), `ID ${id} handed out twice`);
      seen.add(id);
      return BigInt(twitter.decode(id).fields[0]!.value);
    };
    const count = async (n: number): Promise<Map<bigint, number>> => {
      const m = new Map<bigint, number>();
      for (let i = 0; i < n; i++) {
        const d = await datacenter();
        m.set(d, (m.get(d) ?? 0) + 1);
      }
      return m;
    };
    assert.equal((await count(500)).get(1n), 500, "with eu-west up, every ID from eu-west (datacenter 1)");
    await Promise.all(eu.map((s) => s.serve.signal("SIGKILL")));
    assert.ok(((await count(2000)).get(2n) ?? 0) > 0, "with eu-west down, us-east (datacenter 2) serves");
    for (const s of eu) {
      s.serve = await spawnServe(bin, ["serve", "--config", s.conf], s.port);
    }
    const deadline = Date.now() + 60_000;
    while ((await datacenter()) !== 1n) {
      assert.ok(Date.now() < deadline, `the client did not come back to eu-west within 60 s: ${JSON.stringify(c.stats())}`);
    }
    assert.equal((await count(500)).get(1n), 500, "back in eu-west, every ID from it");
    const st = c.stats();
    assert.deepEqual(st.map((s) => s.region), ["", "", "us-east", "us-east"]);
    assert.ok(st[2]!.requests + st[3]!.requests > 0);
  } finally {
    await c.close();
  }
});

test("regionOrder: local servers in use first, then remote ones, then those passed over", () => {
  const s = (tier: number, downUntil = 0) => ({ tier, downUntil, isDown: (now: number) => now < downUntil });
  assert.deepEqual(regionOrder([s(0), s(0), s(1), s(1)], 0, 10), [0, 1, 2, 3]);
  assert.deepEqual(regionOrder([s(0), s(0), s(1), s(1)], 3, 10), [0, 1, 3, 2], "the last that answered leads its own region only");
  assert.deepEqual(regionOrder([s(0, 20), s(0, 30), s(1), s(1, 15)], 1, 10), [2, 0, 1, 3], "local servers passed over come after the remote ones in use, before the remote ones passed over");
});

test("remote options are checked", () => {
  assert.throws(() => new Client({ servers: ["http://a:1"], remote: [{ name: "us", servers: [] }] }), OptionsError);
  assert.throws(() => new Client({ servers: ["http://a:1"], remote: [{ name: "us", servers: ["http://a:1"] }] }), /listed twice/);
});
