/**
 * The client of flurry servers for Node.js and browsers: IDs from a
 * per-namespace buffer filled ahead of need, failover and hedging between
 * servers, typed errors. Integer IDs are bigint (flurry's IDs have up to 63
 * bits; a number holds integers exactly only up to 2^53).
 *
 * @example
 * ```ts
 * import { Client } from "@flurry/client";
 * const c = new Client({ servers: ["http://10.0.0.1:8080", "http://10.0.0.2:8080"] });
 * const id: bigint = await c.next("orders");
 * await c.close();
 * ```
 *
 * @packageDocumentation
 */

export { Client, defaults } from "./client.js";
export type { CallOptions, ClientOptions, Fetched, ServerStats } from "./client.js";
export { defaultBatch, maxBatch } from "./buffer.js";
export {
  BadRequestError,
  ClosedError,
  FlurryError,
  MixError,
  OptionsError,
  RefusedError,
  ServerError,
  UnauthorizedError,
  UnavailableError,
  UnknownNamespaceError,
  WrongKindError,
} from "./errors.js";
export type { Attempt, ErrorCode } from "./errors.js";
export type { Decoded, Info, LayoutInfo, LeaseInfo, NamespaceInfo, SegmentInfo, SegmentStore, StoreIdentity } from "./info.js";
export { Layout, presetNames, toID } from "./layout.js";
export type { FieldKind, LayoutDecoded, LayoutField, NamedValue } from "./layout.js";
export type { FetchFunction } from "./wire.js";
export { encodings, formatID, parseID, type Encoding } from "./encoding.js";
export type { RemoteRegion } from "./regions.js";
