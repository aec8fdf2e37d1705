// Layout against flurry's own implementation: the presets' text forms from
// `flurry layouts --json`, the IDs taken apart by `flurry decode`, and the same
// verdict on good and bad text forms. Random IDs cover every bit of each layout,
// 2^63 − 1 included, where a JavaScript number would have lost the low bits.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { webcrypto } from "node:crypto";
import { after, before, test } from "node:test";

import { Layout, OptionsError, presetNames, toID } from "../src/index.js";
import { cleanup, flurryBinary, required } from "./harness.js";

/** Every test ends by itself: a hang is a failure, not a stuck run. */
const bounded = { timeout: 90_000 };

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
}, { timeout: 600_000 }); // a cold build of flurry takes minutes

after(cleanup);

/** Runs flurry with args; resolves with stdout, or with the error line and exit code. */
function flurry(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 60_000, maxBuffer: 64 << 20 }, (e, out, err) => {
      const code = e === null ? 0 : typeof e.code === "number" ? e.code : 1;
      resolve({ code, out, err });
    });
  });
}

/** n random IDs below 2^bits, and the edges 0, 1 and 2^bits − 1. */
function randomIDs(bits: number, n: number): bigint[] {
  const words = webcrypto.getRandomValues(new BigUint64Array(n));
  const mask = (1n << BigInt(bits)) - 1n;
  return [0n, 1n, mask, ...Array.from(words, (w) => w & mask)];
}

const custom = [
  "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16",
  "time:30:10ms:1700000000000,dc:3,rack:4,host:8,seq:10",
  "time:43:1ms:1970-01-01T00:00:00Z,seq:20",
  "time:20:1m30s:2020-02-29T12:00:00.001Z,a:2,b:3,c:4,d:5,e:6,f:7,g:8,h:1,seq:6",
  "time:41:1ms:2025-01-01T08:00:00+08:00,worker:6,seq:16",
];

test("the presets are flurry's: same names, same text forms", bounded, async (t) => {
  if (skip) return t.skip(skip);
  const r = await flurry("layouts", "--json");
  assert.equal(r.code, 0, r.err);
  const facts = JSON.parse(r.out) as { name: string; layout: string; bits: number }[];
  assert.deepEqual(presetNames, facts.map((f) => f.name).sort());
  for (const f of facts) {
    const l = Layout.parse(f.name);
    assert.equal(l.toString(), f.layout, `preset ${f.name}`);
    assert.equal(l.bits, f.bits, `preset ${f.name}`);
    assert.equal(l.name, f.name);
    assert.equal(Layout.parse(f.layout).toString(), f.layout, `text form of ${f.name}`);
  }
});

test("decode equals flurry decode, on random IDs of every preset and of text forms", bounded, async (t) => {
  if (skip) return t.skip(skip);
  for (const spec of [...presetNames, ...custom]) {
    const l = Layout.parse(spec);
    const ids = randomIDs(l.bits, 200);
    const r = await flurry("decode", "--layout", spec, ...ids.map(String));
    assert.equal(r.code, 0, `${spec}: ${r.err}`);
    const lines = r.out.trim().split("\n");
    assert.equal(lines.length, ids.length);
    for (const [i, line] of lines.entries()) {
      // Node fields and seq are at most 22 bits here: exact as JSON numbers.
      const want = JSON.parse(line) as Record<string, string | number | { name: string; value: string }[]>;
      const got = l.decode(ids[i]!);
      assert.equal(want["id"], got.id.toString(), `${spec}: id`);
      assert.equal(want["time"], got.time.toISOString(), `${spec}: time of ${got.id}`);
      assert.equal(BigInt(want["seq"] as number), got.sequence, `${spec}: seq of ${got.id}`);
      for (const f of got.fields) {
        assert.equal(BigInt(want[f.name] as number), f.value, `${spec}: ${f.name} of ${got.id}`);
      }
      // The decode route's keys too, its 64-bit numbers as strings.
      assert.equal(BigInt(want["unix_ms"] as string), BigInt(got.unixMs), `${spec}: unix_ms of ${got.id}`);
      assert.equal(BigInt(want["sequence"] as string), got.sequence, `${spec}: sequence of ${got.id}`);
      assert.deepEqual(
        (want["fields"] as { name: string; value: string }[]).map((f) => [f.name, BigInt(f.value)]),
        got.fields.map((f) => [f.name, f.value]),
        `${spec}: fields list of ${got.id}`,
      );
      assert.equal(Object.keys(want).length, 6 + got.fields.length, `${spec}: keys of ${got.id}`);
      assert.equal(l.timeOf(got.id).getTime(), got.unixMs);
    }
  }
});

test("the same text forms are refused as flurry refuses them", bounded, async (t) => {
  if (skip) return t.skip(skip);
  const forms = [
    ...custom,
    "TWITTER",
    " time : 41 : 1ms : 2025-01-01T00:00:00Z , w : 6 , sequence : 6 ",
    "time:41:1ms:1288834974657,worker:6,seq:6",
    "time:41:90s:2025-01-01T00:00:00Z,worker:6,seq:6",
    "nope",
    "",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:64",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:17",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:0",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:6",
    "time:41:1ms:2025-01-01T00:00:00Z,seq:6,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,time:3,seq:6",
    "seq:12,time:41:1ms:2025-01-01T00:00:00Z",
    "worker:6,seq:12",
    "time:41:1ms:2099-01-01T00:00:00Z,worker:6,seq:6",
    "time:41:1ms:2025-01-01T00:00:00.0001Z,worker:6,seq:6",
    "time:41:1.5ms:2025-01-01T00:00:00Z,worker:6,seq:6",
    "time:41:0ms:2025-01-01T00:00:00Z,worker:6,seq:6",
    "time:41:1ms:yesterday,worker:6,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,Worker:6,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,id:6,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:6,worker:2,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,worker,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,worker:x,seq:6",
    "time:41:1ms:2025-01-01T00:00:00Z,a:1,b:1,c:1,d:1,e:1,f:1,g:1,h:1,i:1,seq:6",
    "time:41:1ms",
  ];
  for (const form of forms) {
    const r = await flurry("layouts", "--json", "--", form);
    let ours: unknown = null;
    try {
      Layout.parse(form);
    } catch (e) {
      ours = e;
    }
    if (r.code === 0) {
      assert.equal(ours, null, `flurry reads ${JSON.stringify(form)}, Layout.parse refuses it: ${String(ours)}`);
      const want = (JSON.parse(r.out) as { layout: string }[])[0]!.layout;
      assert.equal(Layout.parse(form).toString(), want, JSON.stringify(form));
    } else {
      assert.ok(ours instanceof OptionsError, `flurry refuses ${JSON.stringify(form)} (${r.err.trim()}), Layout.parse reads it`);
      assert.match(ours.message, /^layout: /);
    }
  }
});

test("IDs are bigint or decimal strings, never numbers", bounded, () => {
  const l = Layout.parse("twitter");
  const id = 1541815603606036480n;
  assert.deepEqual(l.decode(id.toString()), l.decode(id));
  assert.equal(toID(" 42 "), 42n);
  assert.throws(() => toID(1541815603606036480 as unknown as bigint), /pass IDs as bigint/);
  assert.throws(() => toID("1e18"), OptionsError);
  assert.throws(() => l.decode(-1n), /not an ID of this 63-bit layout/);
  assert.throws(() => Layout.parse("jssafe").decode(1n << 53n), /53-bit layout/);
});

test("bounds: the first and the last ID of the ticks of a range", bounded, () => {
  const l = Layout.parse("twitter");
  const from = new Date("2022-06-28T16:07:40.105Z");
  const to = new Date("2022-06-28T16:07:41Z");
  const [lo, hi] = l.bounds(from, to);
  assert.equal(l.decode(lo).time.getTime(), from.getTime());
  assert.deepEqual(l.decode(lo).fields.map((f) => f.value), [0n, 0n]);
  assert.equal(l.decode(lo).sequence, 0n);
  assert.equal(l.decode(hi).time.getTime(), to.getTime());
  assert.deepEqual(l.decode(hi).fields.map((f) => f.value), [31n, 31n]);
  assert.equal(l.decode(hi).sequence, 4095n);
  assert.equal(hi + 1n, l.bounds(new Date(to.getTime() + 1), new Date(to.getTime() + 1))[0]);
  assert.deepEqual(l.bounds(new Date(0), new Date(0)), [0n, (1n << 22n) - 1n]);
  assert.throws(() => l.bounds(to, from), /after its end/);
});
