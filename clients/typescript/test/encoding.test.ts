// formatID and parseID against flurry's own implementation: the IDs `flurry gen
// --format X` writes, read back by `flurry decode --format X`, must be written
// the same way and read to the same IDs here; IDs over the whole 63-bit range
// written here must be read by `flurry decode` to the same IDs; and strings
// that are IDs in no form, or in a lenient one (Crockford's I, L and O), must
// get the same verdict here as there.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { webcrypto } from "node:crypto";
import { after, before, test } from "node:test";

import { encodings, formatID, OptionsError, parseID, type Encoding } from "../src/index.js";
import { cleanup, flurryBinary, required } from "./harness.js";

/** Every test ends by itself: a hang is a failure, not a stuck run. */
const bounded = { timeout: 120_000 };

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

/** Runs flurry with args and stdin; resolves with stdout, stderr and exit code. */
function flurry(stdin: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = execFile(bin, args, { timeout: 60_000, maxBuffer: 64 << 20 }, (e, out, err) => {
      const code = e === null ? 0 : typeof e.code === "number" ? e.code : 1;
      resolve({ code, out, err });
    });
    // A flurry that exits without reading its input (IDs as arguments, an
    // error) closes the pipe; its answer is what the test reads, not the write's.
    p.stdin!.on("error", () => {});
    p.stdin!.end(stdin);
  });
}

/** A layout whose IDs are every integer from 0 to 2^63 − 1. */
const fullRange = "time:43:1ms:1970-01-01T00:00:00Z,seq:20";

/** flurry decode's verdict on each string in encoding: the decimal ID, or undefined when it refuses. */
async function goParse(encoding: Encoding, texts: string[]): Promise<(string | undefined)[]> {
  return Promise.all(
    texts.map(async (s) => {
      const r = await flurry("", "decode", "--layout", fullRange, "--format", encoding, "--", s);
      if (r.code !== 0) {
        assert.match(r.err, /^flurry: decode /, `flurry decode --format ${encoding} ${s}: ${r.err}`);
        return undefined;
      }
      return (JSON.parse(r.out) as { id: string }).id;
    }),
  );
}

/** This module's verdict, in goParse's form. */
function tsParse(encoding: Encoding, s: string): string | undefined {
  try {
    return parseID(s, encoding).toString();
  } catch (e) {
    assert.ok(e instanceof OptionsError, `parseID(${JSON.stringify(s)}, ${encoding}) threw ${String(e)}`);
    return undefined;
  }
}

test("the encodings are flurry's: the same names, in the same order", bounded, async (t) => {
  if (skip) return t.skip(skip);
  const r = await flurry("", "gen", "--format", "base85");
  // The error lists the names ParseEncoding accepts, in the library's order.
  const listed = /want one of ([a-z0-9, ]+)/.exec(r.err);
  assert.ok(listed, r.err);
  assert.deepEqual(listed[1]!.trim().split(", "), [...encodings]);
});

test("formatID and parseID equal flurry gen --format and flurry decode --format", bounded, async (t) => {
  if (skip) return t.skip(skip);
  // A layout whose node field spreads the IDs over 40 of their bits, with an
  // epoch a day ago so that its 8 hourly bits of time last.
  const epoch = new Date(Date.now() - 86_400_000).toISOString();
  const layout = `time:8:1h:${epoch},worker:40,seq:15`;
  const workers = Array.from(webcrypto.getRandomValues(new BigUint64Array(3)), (w) => w & ((1n << 40n) - 1n));
  for (const e of encodings) {
    for (const w of [0n, (1n << 40n) - 1n, ...workers]) {
      const gen = await flurry("", "gen", "-n", "300", "--layout", layout, "--node", `worker=${w}`, "--format", e);
      assert.equal(gen.code, 0, gen.err);
      const lines = gen.out.trimEnd().split("\n");
      assert.equal(lines.length, 300);
      const dec = await flurry(gen.out, "decode", "--layout", layout, "--format", e);
      assert.equal(dec.code, 0, dec.err);
      const ids = dec.out.trimEnd().split("\n").map((l) => BigInt((JSON.parse(l) as { id: string }).id));
      assert.equal(ids.length, lines.length);
      ids.forEach((id, i) => {
        assert.equal(formatID(id, e), lines[i], `formatID(${id}, ${e})`);
        assert.equal(parseID(lines[i]!, e), id, `parseID(${lines[i]}, ${e})`);
      });
    }
  }
});

test("flurry decode reads what formatID writes, over the whole 63-bit range", bounded, async (t) => {
  if (skip) return t.skip(skip);
  const words = webcrypto.getRandomValues(new BigUint64Array(400));
  const ids = [0n, 1n, (1n << 63n) - 1n, (1n << 63n) - 2n, 1n << 62n, ...Array.from(words, (w, i) => (w >> 1n) >> BigInt(i % 60))];
  for (const e of encodings) {
    const texts = ids.map((id) => formatID(id, e));
    const r = await flurry(texts.join("\n") + "\n", "decode", "--layout", fullRange, "--format", e);
    assert.equal(r.code, 0, `${e}: ${r.err}`);
    const back = r.out.trimEnd().split("\n").map((l) => (JSON.parse(l) as { id: string }).id);
    assert.deepEqual(back, ids.map(String), e);
    // The text is the one canonical form: no leading zero digit, the
    // alphabet's own case, so reading it back and equal IDs make equal bytes.
    texts.forEach((s, i) => {
      assert.equal(parseID(s, e), ids[i]);
      if (e !== "base64" && ids[i]! > 0n) {
        assert.notEqual(s[0], formatID(0n, e), `${e} of ${ids[i]}: ${s} has a leading zero digit`);
      }
    });
  }
  assert.throws(() => formatID(-1n, "hex"), OptionsError);
  assert.throws(() => formatID(1n << 63n, "base62"), OptionsError);
  assert.throws(() => formatID(1n, "base85" as Encoding), /use one of decimal, hex/);
});

test("parseID gives flurry decode's verdict on strings in no form, in lenient forms and at the edges", bounded, async (t) => {
  if (skip) return t.skip(skip);
  const max = (1n << 63n) - 1n;
  const strings: Record<Encoding, string[]> = {
    decimal: ["0", "007", "-1", "+1", "1e3", "9223372036854775807", "9223372036854775808", "١٢"],
    hex: ["FF", "aB", "7fffffffffffffff", "8000000000000000", "0x10", "-1", "g", "000000000000000000000001"],
    base2: ["0001", "2", "1" + "0".repeat(62), "1" + "0".repeat(63), "-1"],
    base32: ["y", "Y", "0", "by", "9999999999999", "h769h769h769", "-y"],
    base36: ["ZZ", "Zz", "1Y2P0IJ32E8E7", "1y2p0ij32e8e8", "_", "-1"],
    base58: ["11112", "0", "l", "I", "O", "npL6MjP8Qfd", "4zzv4rZaYpj", "-2"],
    base64: ["MTU0", "LTE=", "MTU0MTgxNTYwMzYwNjAzNjQ4MA==", "MTU0MTgxNTYwMzYwNjAzNjQ4MA", "MTU0MTgxNTYwMzYwNjAzNjQ4MB==", "MQ==", "MR==", "MTI=", "MTJ=", "=MTI", "MT=I", "M===", "OTk5OTk5OTk5OTk5OTk5OTk5OTk=", "MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDE=", "MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDE=", "MTU0MTgx-TYwMzYw", "MTU0MTgx_TYwMzYw"],
    base62: ["0010", "z", "Z", "AzL8n0Y58m7", "AzL8n0Y58m8", "a_b", "é", "-1", "zzzzzzzzzzz"],
    crockford32: ["1ASD13XH1F800", "1asd13xh1f800", "1ASDI3XH1F8OO", "IASD13XH1F8oo", "lASDl3XHlF800", "L0", "i0", "o", "U", "u", "1ASD-13XH", "1ASD13XH1F800*", "7ZZZZZZZZZZZZ", "7zzzzzzzzzzzz", "8000000000000", "-1"],
  };
  for (const e of encodings) {
    const list = [...strings[e], formatID(max, e), formatID(0n, e)];
    const want = await goParse(e, list);
    list.forEach((s, i) => {
      assert.equal(tsParse(e, s), want[i], `${e} ${JSON.stringify(s)}: flurry decode says ${want[i] ?? "not an ID"}`);
    });
  }
  // Both refuse the empty string; flurry decode skips blank lines, so say it here.
  for (const e of encodings) {
    assert.throws(() => parseID("", e), /empty/);
  }
});
