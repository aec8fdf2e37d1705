// Bit layouts of flurry's integer IDs, read from their text form (what a server
// reports in info().namespaces[i].layout.text) or a preset's name, and IDs taken
// apart by them without asking a server. The arithmetic is on bigint: an ID has
// up to 63 bits, and a JavaScript number holds integers exactly only up to 2^53.

import { OptionsError } from "./errors.js";

/** What a field of a layout holds. */
export type FieldKind = "time" | "node" | "seq";

/** One field of a layout, most significant first. */
export interface LayoutField {
  /** "time", "seq", or the node field's name (datacenter, worker, shard, ...). */
  readonly name: string;
  readonly kind: FieldKind;
  /** The field's width in bits, and the position of its lowest bit in the ID. */
  readonly bits: number;
  readonly shift: number;
}

/** A node field's name and value. */
export interface NamedValue {
  readonly name: string;
  readonly value: bigint;
}

/** An ID taken apart by a {@link Layout}. */
export interface LayoutDecoded {
  readonly id: bigint;
  /** The start of the tick the ID was made in, to the millisecond. */
  readonly time: Date;
  /** The same in Unix milliseconds. */
  readonly unixMs: number;
  /** The time field's value: ticks of the layout's unit since its epoch. */
  readonly tick: bigint;
  /** The node fields, most significant first. */
  readonly fields: readonly NamedValue[];
  readonly sequence: bigint;
}

/** The most node fields a layout may have, as flurry's. */
const maxNodeFields = 8;
const reserved = new Set(["time", "seq", "sequence", "id", "tick"]);

interface Spec {
  unitMs: number;
  epochMs: number;
  fields: { name: string; kind: FieldKind; bits: number }[];
}

const twitterEpoch = 1288834974657; // 2010-11-04T01:42:54.657Z

function spec(unitMs: number, epochMs: number, fields: [string, number][]): Spec {
  return {
    unitMs,
    epochMs,
    fields: fields.map(([name, bits]) => ({
      name,
      kind: name === "time" ? "time" : name === "seq" ? "seq" : "node",
      bits,
    })),
  };
}

/** flurry's presets (layout/presets.go), by name. */
const presets: Record<string, Spec> = {
  twitter: spec(1, twitterEpoch, [["time", 41], ["datacenter", 5], ["worker", 5], ["seq", 12]]),
  leaf: spec(1, twitterEpoch, [["time", 41], ["worker", 10], ["seq", 12]]),
  sonyflake: spec(10, Date.UTC(2014, 8, 1), [["time", 39], ["seq", 8], ["machine", 16]]),
  baidu: spec(1000, Date.UTC(2016, 4, 20) - 8 * 3600 * 1000, [["time", 28], ["worker", 22], ["seq", 13]]),
  instagram: spec(1, 1314220021721, [["time", 40], ["shard", 13], ["seq", 10]]),
  discord: spec(1, 1420070400000, [["time", 41], ["worker", 5], ["process", 5], ["seq", 12]]),
  mastodon: spec(1, 0, [["time", 47], ["seq", 16]]),
  gameserver: spec(1, 1541001600000, [["time", 38], ["platform", 3], ["area", 11], ["app", 5], ["seq", 6]]),
  jssafe: spec(100, Date.UTC(2025, 0, 1), [["time", 34], ["worker", 6], ["seq", 13]]),
};

/** The names of flurry's presets, sorted. */
export const presetNames: readonly string[] = Object.keys(presets).sort();

/**
 * A bit layout of integer IDs: a time field of `unitMs` ticks since `epoch`,
 * node fields, and a sequence field, most significant first, in at most 63 bits.
 * Get one with {@link Layout.parse}, or from a server with `Client.layout`.
 */
export class Layout {
  /** The preset's name, or "" for a layout given by its fields. */
  readonly name: string;
  /** The tick of the time field, in milliseconds. */
  readonly unitMs: number;
  /** Where the time field counts from, in Unix milliseconds. */
  readonly epochMs: number;
  /** The fields, most significant first. */
  readonly fields: readonly LayoutField[];
  /** The bits the fields take in all (at most 63). */
  readonly bits: number;
  private readonly time: LayoutField;
  private readonly seq: LayoutField;
  private readonly nodes: readonly LayoutField[];

  private constructor(name: string, s: Spec) {
    this.name = name;
    this.unitMs = s.unitMs;
    this.epochMs = s.epochMs;
    this.bits = s.fields.reduce((n, f) => n + f.bits, 0);
    let shift = this.bits;
    this.fields = s.fields.map((f) => {
      shift -= f.bits;
      return Object.freeze({ name: f.name, kind: f.kind, bits: f.bits, shift });
    });
    this.time = this.fields.find((f) => f.kind === "time")!;
    this.seq = this.fields.find((f) => f.kind === "seq")!;
    this.nodes = this.fields.filter((f) => f.kind === "node");
    Object.freeze(this.fields);
  }

  /**
   * Returns the preset of that name (case-insensitive: twitter, leaf, sonyflake,
   * baidu, instagram, discord, mastodon, gameserver, jssafe), or reads the text
   * form flurry writes and reads, e.g.
   * `time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16`: the time field first as
   * time:<bits>:<unit>:<epoch> (unit 1ms, 10ms, 1s, ...; epoch RFC 3339 or Unix
   * milliseconds), then <name>:<bits> for each node field and the sequence
   * (seq). Throws an {@link OptionsError} that names what is wrong.
   */
  static parse(text: string): Layout {
    const s = text.trim();
    if (s === "") {
      throw invalid(`empty layout; give a preset name (${presetNames.join(", ")}) or fields such as time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12`);
    }
    if (!/[:,]/.test(s)) {
      const key = s.toLowerCase();
      const p = presets[key];
      if (p === undefined) {
        throw invalid(`unknown preset ${JSON.stringify(clip(s))}; known presets: ${presetNames.join(", ")} (or give fields, e.g. time:41:1ms:2010-11-04T01:42:54.657Z,worker:10,seq:12)`);
      }
      return new Layout(key, p);
    }
    const sp: Spec = { unitMs: 0, epochMs: 0, fields: [] };
    s.split(",").forEach((raw, i) => {
      const parts = raw.split(":").map((p) => p.trim());
      const name = parts[0] ?? "";
      if (name === "time") {
        if (parts.length < 4) {
          throw invalid(`field ${i + 1} ${JSON.stringify(clip(raw.trim()))}: the time field is time:<bits>:<unit>:<epoch>, e.g. time:41:1ms:2010-11-04T01:42:54.657Z`);
        }
        const bits = parseBits(i, name, parts[1]!);
        sp.unitMs = parseUnit(parts[2]!);
        sp.epochMs = parseEpoch(parts.slice(3).join(":"));
        sp.fields.push({ name, kind: "time", bits });
        return;
      }
      if (parts.length !== 2) {
        throw invalid(`field ${i + 1} ${JSON.stringify(clip(raw.trim()))}: write <name>:<bits>, e.g. worker:10 or seq:12`);
      }
      const bits = parseBits(i, name, parts[1]!);
      if (name === "seq" || name === "sequence") {
        sp.fields.push({ name: "seq", kind: "seq", bits });
      } else {
        sp.fields.push({ name, kind: "node", bits });
      }
    });
    check(sp);
    checkEpoch(sp.epochMs);
    return new Layout("", sp);
  }

  /** The canonical text form, which {@link Layout.parse} reads and flurry writes. */
  toString(): string {
    return this.fields
      .map((f) => (f.kind === "time" ? `time:${f.bits}:${formatUnit(this.unitMs)}:${formatEpoch(this.epochMs)}` : `${f.name}:${f.bits}`))
      .join(",");
  }

  /**
   * Takes an ID apart: the time of its tick, each node field, the sequence. The
   * ID is a bigint or a decimal string, never a number (IDs above 2^53 would
   * have lost their low bits already). An ID that is negative or has bits above
   * the layout's width is not one of this layout: an {@link OptionsError}.
   */
  decode(id: bigint | string): LayoutDecoded {
    const v = toID(id);
    if (v < 0n || v >> BigInt(this.bits) !== 0n) {
      throw invalid(`${v} is not an ID of this ${this.bits}-bit layout (0..${(1n << BigInt(this.bits)) - 1n})`);
    }
    const tick = bitsOf(v, this.time);
    const unixMs = this.tickStartMs(tick);
    return {
      id: v,
      time: new Date(unixMs),
      unixMs,
      tick,
      fields: this.nodes.map((f) => ({ name: f.name, value: bitsOf(v, f) })),
      sequence: bitsOf(v, this.seq),
    };
  }

  /** The start of the tick an ID was made in (it does not check the ID: see decode). */
  timeOf(id: bigint | string): Date {
    return new Date(this.tickStartMs(bitsOf(toID(id), this.time)));
  }

  /**
   * The smallest and the largest ID any node can issue in the ticks that contain
   * `from` and `to`, for range queries on an ID column
   * (`WHERE id BETWEEN lo AND hi`). Times before the epoch count as the first
   * tick and times past the time field's end as the last.
   */
  bounds(from: Date, to: Date): [lo: bigint, hi: bigint] {
    if (from.getTime() > to.getTime()) {
      throw invalid(`range start ${from.toISOString()} is after its end ${to.toISOString()}`);
    }
    const maxTick = (1n << BigInt(this.time.bits)) - 1n;
    const tickOf = (d: Date): bigint => {
      const t = BigInt(Math.floor((d.getTime() - this.epochMs) / this.unitMs));
      return t < 0n ? 0n : t > maxTick ? maxTick : t;
    };
    const shift = BigInt(this.time.shift);
    return [tickOf(from) << shift, (tickOf(to) << shift) | ((1n << shift) - 1n)];
  }

  private tickStartMs(tick: bigint): number {
    return Number(BigInt(this.epochMs) + tick * BigInt(this.unitMs));
  }
}

function bitsOf(v: bigint, f: LayoutField): bigint {
  return (v >> BigInt(f.shift)) & ((1n << BigInt(f.bits)) - 1n);
}

/** Reads an ID given as a bigint or a decimal string. */
export function toID(id: bigint | string): bigint {
  if (typeof id === "bigint") {
    return id;
  }
  if (typeof id === "string" && /^-?[0-9]{1,20}$/.test(id.trim())) {
    return BigInt(id.trim());
  }
  throw invalid(`ID ${JSON.stringify(typeof id === "string" ? clip(id) : String(id))} is not a bigint or a decimal string; pass IDs as bigint (a number above 2^53 has lost its low bits)`);
}

function check(s: Spec): void {
  const seen = new Set<string>();
  let total = 0;
  s.fields.forEach((f, i) => {
    if (f.kind === "time" && i !== 0) {
      throw invalid(`the time field is field ${i + 1}; it must come first (most significant) so that IDs sort by time`);
    }
    if (f.kind === "node") {
      if (reserved.has(f.name)) {
        throw invalid(`${JSON.stringify(f.name)} is reserved and cannot name a node field`);
      }
      if (!/^[a-z][a-z0-9_]{0,31}$/.test(f.name)) {
        throw invalid(`node field name ${JSON.stringify(clip(f.name))}: use a lower-case letter, then letters, digits or _ (at most 32)`);
      }
    }
    if (seen.has(f.name)) {
      throw invalid(`two fields are named ${JSON.stringify(f.name)}`);
    }
    seen.add(f.name);
    if (f.bits > 62) {
      throw invalid(`field ${JSON.stringify(f.name)} has ${f.bits} bits; at most 62 leave room for the other fields`);
    }
    total += f.bits;
  });
  const times = s.fields.filter((f) => f.kind === "time").length;
  const seqs = s.fields.filter((f) => f.kind === "seq").length;
  if (times !== 1) {
    throw invalid(times === 0 ? "no time field; add one first, e.g. time:41:1ms:<epoch>" : `${times} time fields; a layout has exactly one`);
  }
  if (seqs !== 1) {
    throw invalid(seqs === 0 ? "no sequence field; add one, e.g. seq:12" : `${seqs} sequence fields; a layout has exactly one`);
  }
  if (total > 63) {
    throw invalid(`fields take ${total} bits (${s.fields.map((f) => `${f.name} ${f.bits}`).join(" + ")}); at most 63 fit in a positive int64, so remove ${total - 63}`);
  }
  if (s.fields.length - 2 > maxNodeFields) {
    throw invalid(`${s.fields.length - 2} node fields; at most ${maxNodeFields} are supported`);
  }
}

function parseBits(i: number, name: string, s: string): number {
  if (!/^[0-9]{1,2}$/.test(s) || Number(s) < 1) {
    throw invalid(`field ${i + 1} ${JSON.stringify(clip(name))}: bits ${JSON.stringify(clip(s))} is not a number from 1 to 62`);
  }
  return Number(s);
}

const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Reads a tick length as flurry writes it (1ms, 10ms, 1s; also 1m, 1h, 1m30s). */
function parseUnit(s: string): number {
  const m = /^(?:[0-9]+(?:ms|s|m|h))+$/.test(s) ? s.match(/[0-9]+(?:ms|s|m|h)/g) : null;
  if (m === null) {
    throw invalid(`time unit ${JSON.stringify(clip(s))} is not a whole number of milliseconds such as 1ms, 10ms or 1s`);
  }
  const total = m.reduce((n, part) => {
    const [, num, unit] = /^([0-9]+)(ms|s|m|h)$/.exec(part)!;
    return n + Number(num) * unitMs[unit!]!;
  }, 0);
  if (total < 1 || !Number.isSafeInteger(total)) {
    throw invalid(`time unit ${JSON.stringify(clip(s))} is not a whole positive number of milliseconds`);
  }
  return total;
}

/** Reads an epoch: RFC 3339 to the millisecond, or Unix milliseconds. */
function parseEpoch(s: string): number {
  let ms: number;
  if (/^[0-9]+$/.test(s)) {
    ms = Number(s);
    if (ms > 253402300799999) {
      throw invalid(`epoch ${JSON.stringify(clip(s))} is beyond year 9999 in Unix milliseconds`);
    }
    return ms;
  }
  const m = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.([0-9]+))?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$/.exec(s);
  ms = m === null ? NaN : Date.parse(s.toUpperCase());
  if (m === null || Number.isNaN(ms)) {
    throw invalid(`epoch ${JSON.stringify(clip(s))} is neither RFC 3339 (2010-11-04T01:42:54.657Z) nor Unix milliseconds`);
  }
  if ((m[1] ?? "").slice(3).replace(/0/g, "") !== "") {
    throw invalid(`epoch ${JSON.stringify(clip(s))} has sub-millisecond precision; round it to a millisecond`);
  }
  if (ms < 0) {
    throw invalid(`epoch ${JSON.stringify(clip(s))} is before 1970-01-01`);
  }
  return ms;
}

/** Refuses an epoch after now: no ID of the layout could have been made yet. */
function checkEpoch(ms: number): void {
  if (ms > Date.now()) {
    throw invalid(`epoch ${formatEpoch(ms)} is in the future (now is ${new Date().toISOString()}); IDs before it cannot be made`);
  }
}

function formatUnit(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function formatEpoch(ms: number): string {
  const iso = new Date(ms).toISOString();
  return ms % 1000 === 0 ? iso.replace(/\.000Z$/, "Z") : iso;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

function invalid(message: string): OptionsError {
  return new OptionsError(`layout: ${message}`);
}
