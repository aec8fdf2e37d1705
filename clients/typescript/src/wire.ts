// The Connect protocol's unary calls with the JSON codec, over fetch: a POST of
// the request message as JSON to /flurry.v1.IDService/<Method>, answered by the
// response message as JSON (HTTP 200) or by a Connect error, {"code","message"}.
// JSON follows the Protobuf JSON mapping: int64 fields are decimal strings and
// bytes fields base64, so nothing 64-bit passes through a JavaScript number.

import { explainFetchError } from "./browser.js";
import { ServerError } from "./errors.js";

/** The fetch function the client calls; the global one unless the options give another. */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

const service = "/flurry.v1.IDService/";

/**
 * Sends one unary request and returns the parsed JSON answer. A Connect error,
 * or an answer that is not one (a proxy's HTML page), throws a ServerError; a
 * network failure or an abort throws what fetch throws.
 */
export async function unary(
  fetchFn: FetchFunction,
  baseURL: string,
  method: "Next" | "Decode" | "Info",
  message: object,
  token: string,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "Connect-Protocol-Version": "1",
  };
  if (token !== "") {
    headers["Authorization"] = `Bearer ${token}`;
  }
  let resp: Response;
  try {
    resp = await fetchFn(baseURL + service + method, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
      signal,
    });
  } catch (e) {
    if (signal.aborted || !(e instanceof Error)) {
      throw e; // the abort's own reason, which the caller tells apart
    }
    // Node.js's fetch says only "fetch failed"; the reason (ECONNREFUSED, a
    // reset, a DNS failure) is in its cause.
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message !== "" && !e.message.includes(cause.message)) {
      throw new Error(`${e.message}: ${cause.message}`, { cause: e });
    }
    throw explainFetchError(e, baseURL);
  }
  const text = await resp.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (resp.status === 200) {
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new ServerError("internal", `answer to ${method} is not a JSON object: ${clip(text)}`, resp.status);
    }
    return body as Record<string, unknown>;
  }
  if (body !== null && typeof body === "object" && typeof (body as { code?: unknown }).code === "string") {
    const e = body as { code: string; message?: unknown };
    const msg = typeof e.message === "string" && e.message !== "" ? e.message : e.code;
    throw new ServerError(e.code, msg, resp.status);
  }
  const code = codeOfStatus(resp.status);
  throw new ServerError(code, `HTTP ${resp.status} ${resp.statusText}: ${clip(text)}`, resp.status);
}

/**
 * The Connect code of an HTTP status whose body is not a Connect error (the
 * Connect protocol's table): a proxy's 502 is unavailable, a 404 from a path
 * no flurry serves is unimplemented (a broken server, not an unknown namespace).
 */
function codeOfStatus(status: number): string {
  switch (status) {
    case 400: return "internal";
    case 401: return "unauthenticated";
    case 403: return "permission_denied";
    case 404: return "unimplemented";
    case 429: case 502: case 503: case 504: return "unavailable";
    default: return "unknown";
  }
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > 200 ? `${one.slice(0, 200)}...` : one || "(empty body)";
}

/** A NextResponse's IDs: integers or text, as the namespace issues. */
export interface NextAnswer {
  ids: bigint[];
  textIds: string[];
}

/**
 * Reads a NextResponse: packedIds (8 bytes per ID, little-endian, base64 in
 * JSON) when the server knows the field, else ids (decimal strings), and
 * textIds. It refuses what breaks the contract, as a failure of that server: both
 * ids and packedIds, no IDs, more IDs than asked, integer IDs that are negative or
 * not strictly increasing (a repeated ID would be one).
 */
export function parseNext(m: Record<string, unknown>, asked: number): NextAnswer {
  let ids: bigint[] = [];
  const packed = m["packedIds"];
  const plain = m["ids"];
  if (packed !== undefined && packed !== "") {
    if (Array.isArray(plain) && plain.length > 0) {
      throw new ServerError("internal", "server answered with both ids and packedIds", 200);
    }
    if (typeof packed !== "string") {
      throw new ServerError("internal", "server answered with packedIds that are not a base64 string", 200);
    }
    ids = unpackIDs(packed);
  } else if (plain !== undefined) {
    if (!Array.isArray(plain)) {
      throw new ServerError("internal", "server answered with ids that are not a list", 200);
    }
    ids = plain.map(toInt64);
  }
  let textIds: string[] = [];
  const text = m["textIds"];
  if (text !== undefined) {
    if (!Array.isArray(text) || !text.every((t) => typeof t === "string")) {
      throw new ServerError("internal", "server answered with textIds that are not a list of strings", 200);
    }
    textIds = text as string[];
  }
  const n = ids.length + textIds.length;
  if (n === 0) {
    throw new ServerError("internal", "server answered with no IDs", 200);
  }
  if (n > asked) {
    throw new ServerError("internal", `server answered with ${n} IDs for ${asked} asked`, 200);
  }
  let prev = -1n;
  for (const v of ids) {
    if (v <= prev) {
      throw new ServerError("internal", `server answered with IDs out of order or repeated (${v} after ${prev})`, 200);
    }
    prev = v;
  }
  return { ids, textIds };
}

/** Parses an int64 of the Protobuf JSON mapping: a decimal string (or a safe integer). */
export function toInt64(v: unknown): bigint {
  if (typeof v === "string" && /^-?[0-9]{1,19}$/.test(v)) {
    const b = BigInt(v);
    if (b >= -(1n << 63n) && b < 1n << 63n) {
      return b;
    }
  }
  if (typeof v === "number" && Number.isSafeInteger(v)) {
    return BigInt(v);
  }
  throw new ServerError("internal", `server answered with ${JSON.stringify(v)} where a 64-bit integer belongs`, 200);
}

/** Decodes packedIds: base64 of 8 bytes per ID, little-endian, signed. */
export function unpackIDs(b64: string): bigint[] {
  const bytes = fromBase64(b64);
  if (bytes.length % 8 !== 0) {
    throw new ServerError("internal", `server answered with ${bytes.length} bytes of packedIds, not a multiple of 8`, 200);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ids = new Array<bigint>(bytes.length / 8);
  for (let i = 0; i < ids.length; i++) {
    ids[i] = view.getBigInt64(8 * i, true);
  }
  return ids;
}

interface NodeBuffer {
  from(s: string, encoding: "base64"): Uint8Array;
}

/**
 * Decodes base64 (standard or URL alphabet, padded or not, as the Protobuf JSON
 * mapping accepts). Node.js's Buffer when there is one (one native pass),
 * else atob, which every browser has.
 */
function fromBase64(s: string): Uint8Array {
  if (/[^A-Za-z0-9+/\-_=]/.test(s)) {
    throw new ServerError("internal", "server answered with packedIds that are not base64", 200);
  }
  const std = s.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (std.length % 4 === 1) {
    throw new ServerError("internal", "server answered with packedIds of a broken base64 length", 200);
  }
  const nodeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
  if (nodeBuffer !== undefined) {
    return nodeBuffer.from(std, "base64");
  }
  const bin = atob(std + "=".repeat((4 - (std.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    out[i] = bin.charCodeAt(i);
  }
  return out;
}
