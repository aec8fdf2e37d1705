// The answers of Decode and Info, from the Protobuf JSON mapping (int64 as
// decimal strings, zero values left out) to plain objects: bigint for IDs and
// anything taken from an ID's bits or counting IDs, Date for instants.

import type { NamedValue } from "./layout.js";
import { toInt64 } from "./wire.js";

/** An ID that a server took apart (Client.decode). */
export interface Decoded {
  /** The namespace asked for, and its strategy: snowflake, segment, redis, uuidv7 or objectid. */
  readonly namespace: string;
  readonly strategy: string;
  /** The ID as the server writes it: decimal, or the text form of a uuidv7 or objectid ID. */
  readonly id: string;
  /** When the ID was made, to the millisecond; null for segment IDs, which carry no time. */
  readonly time: Date | null;
  /**
   * The node fields by name, in layout order (datacenter, worker, ...); "random"
   * for an objectid (its 5-byte process value); "store" (the residue class) in
   * a segment namespace with several stores.
   */
  readonly fields: readonly NamedValue[];
  /** The sequence field (snowflake, redis), the counter (objectid, segment), or 0n (uuidv7). */
  readonly sequence: bigint;
}

/** A server and the namespaces the caller may see (Client.info). */
export interface Info {
  readonly version: string;
  readonly started: Date | null;
  /** Random, made at each start of the server: two addresses of one server answer the same. */
  readonly instance: string;
  /** In the order of the server's configuration. */
  readonly namespaces: readonly NamespaceInfo[];
}

/** One namespace of a server. */
export interface NamespaceInfo {
  readonly name: string;
  /** snowflake, segment, redis, uuidv7 or objectid. */
  readonly strategy: string;
  /** Whether the namespace can issue now, and why not, in one line. */
  readonly ready: boolean;
  readonly notReadyReason: string;
  /** IDs issued since the server started. */
  readonly issued: bigint;
  readonly tokenRequired: boolean;
  /** The layout of a snowflake or redis namespace's IDs; null for others. */
  readonly layout: LayoutInfo | null;
  /** The lease of a snowflake namespace's node value; null for others. */
  readonly lease: LeaseInfo | null;
  /** The buffers of a segment namespace; null for others. */
  readonly segment: SegmentInfo | null;
  /** What an operator should know, such as a store that only this server can use. */
  readonly warnings: readonly string[];
}

/** Names the data a lease or segment store keeps. */
export interface StoreIdentity {
  /** Equal for two servers that use one store, different for two stores. */
  readonly id: string;
  /**
   * Only this server can use the store (the embedded file store in its data
   * directory): a second server with a store of its own issues the same IDs.
   */
  readonly private: boolean;
}

/** One segment store of a namespace: it hands out residue class residue mod modulus. */
export interface SegmentStore {
  /** Null while the store does not answer. */
  readonly identity: StoreIdentity | null;
  readonly residue: bigint;
  readonly modulus: bigint;
}

/** The layout of a namespace's IDs. */
export interface LayoutInfo {
  /** The text form, which Layout.parse reads, and the preset's name if it is one. */
  readonly text: string;
  readonly preset: string;
  readonly epoch: Date | null;
  /** When the time field runs out, and the seconds left until then. */
  readonly lifetime: Date | null;
  readonly lifeLeftSeconds: number;
  readonly idsPerSecondPerNode: number;
  /** The node value the namespace issues with, by field. */
  readonly node: readonly NamedValue[];
}

/** The lease a snowflake namespace takes its node value from. */
export interface LeaseInfo {
  /** The store's URL, password redacted (shown to operators only). */
  readonly store: string;
  readonly scope: string;
  readonly value: bigint;
  readonly owner: string;
  /** The high-water mark. */
  readonly mark: Date | null;
  /** held, lost, acquiring or static. */
  readonly state: string;
  /** The lease store's identity; null while it does not answer, or from a server before identities. */
  readonly identity: StoreIdentity | null;
  /** The layout's node fields the leased value fills; the others are fixed by configuration. */
  readonly leased: readonly string[];
  /** The leased value is fixed by configuration (lease.fixed): the server leases that value or none. */
  readonly fixedValue: boolean;
}

/** The buffers of a segment namespace. */
export interface SegmentInfo {
  readonly tag: string;
  readonly stores: readonly string[];
  readonly currentFirst: bigint;
  readonly currentLast: bigint;
  readonly issued: bigint;
  readonly nextReady: boolean;
  readonly buffered: bigint;
  readonly rate: number;
  readonly runwaySeconds: number;
  readonly step: bigint;
  readonly fetches: bigint;
  readonly lastError: string;
  /** The stores in the order of stores, with their identities and residue classes. */
  readonly storeIdentities: readonly SegmentStore[];
}

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | null {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null;
}

function str(m: Obj, k: string): string {
  const v = m[k];
  return typeof v === "string" ? v : "";
}

function bool(m: Obj, k: string): boolean {
  return m[k] === true;
}

function int(m: Obj, k: string): bigint {
  return m[k] === undefined ? 0n : toInt64(m[k]);
}

function num(m: Obj, k: string): number {
  const v = m[k];
  if (typeof v === "number") {
    return v;
  }
  if (typeof v === "string" && v !== "") {
    return Number(v); // int64 fields in seconds, and "NaN"/"Infinity" of doubles
  }
  return 0;
}

function date(m: Obj, k: string): Date | null {
  const s = str(m, k);
  if (s === "") {
    return null;
  }
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : new Date(ms);
}

function list(m: Obj, k: string): unknown[] {
  const v = m[k];
  return Array.isArray(v) ? v : [];
}

function identity(v: unknown): StoreIdentity | null {
  const o = obj(v);
  return o === null ? null : { id: str(o, "id"), private: bool(o, "private") };
}

function strings(m: Obj, k: string): string[] {
  return list(m, k).filter((s): s is string => typeof s === "string");
}

function named(m: Obj, k: string): NamedValue[] {
  return list(m, k).map((f) => {
    const o = obj(f) ?? {};
    return { name: str(o, "name"), value: int(o, "value") };
  });
}

/** Maps a DecodeResponse. */
export function decodedOf(m: Obj): Decoded {
  return {
    namespace: str(m, "namespace"),
    strategy: str(m, "strategy"),
    id: str(m, "id"),
    time: date(m, "time"),
    fields: named(m, "fields"),
    sequence: int(m, "sequence"),
  };
}

/** Maps an InfoResponse. */
export function infoOf(m: Obj): Info {
  return {
    version: str(m, "version"),
    started: date(m, "started"),
    instance: str(m, "instance"),
    namespaces: list(m, "namespaces").map((n) => {
      const o = obj(n) ?? {};
      const l = obj(o["layout"]);
      const ls = obj(o["lease"]);
      const sg = obj(o["segment"]);
      return {
        name: str(o, "name"),
        strategy: str(o, "strategy"),
        ready: bool(o, "ready"),
        notReadyReason: str(o, "notReadyReason"),
        issued: int(o, "issued"),
        tokenRequired: bool(o, "tokenRequired"),
        layout: l === null ? null : {
          text: str(l, "text"),
          preset: str(l, "preset"),
          epoch: date(l, "epoch"),
          lifetime: date(l, "lifetime"),
          lifeLeftSeconds: num(l, "lifeLeftSeconds"),
          idsPerSecondPerNode: num(l, "idsPerSecondPerNode"),
          node: named(l, "node"),
        },
        lease: ls === null ? null : {
          store: str(ls, "store"),
          scope: str(ls, "scope"),
          value: int(ls, "value"),
          owner: str(ls, "owner"),
          mark: date(ls, "mark"),
          state: str(ls, "state"),
          identity: identity(ls["identity"]),
          leased: strings(ls, "leased"),
          fixedValue: bool(ls, "fixedValue"),
        },
        segment: sg === null ? null : {
          tag: str(sg, "tag"),
          stores: list(sg, "stores").filter((s): s is string => typeof s === "string"),
          currentFirst: int(sg, "currentFirst"),
          currentLast: int(sg, "currentLast"),
          issued: int(sg, "issued"),
          nextReady: bool(sg, "nextReady"),
          buffered: int(sg, "buffered"),
          rate: num(sg, "rate"),
          runwaySeconds: num(sg, "runwaySeconds"),
          step: int(sg, "step"),
          fetches: int(sg, "fetches"),
          lastError: str(sg, "lastError"),
          storeIdentities: list(sg, "storeIdentities").map((x) => {
            const st = obj(x) ?? {};
            return { identity: identity(st["identity"]), residue: int(st, "residue"), modulus: int(st, "modulus") };
          }),
        },
        warnings: strings(o, "warnings"),
      };
    }),
  };
}
