/**
 * The errors the client throws. Branch on the class (`instanceof`) or on `code`;
 * every message says what went wrong and what to do.
 *
 * - {@link RefusedError} (and its subclasses {@link UnknownNamespaceError},
 *   {@link UnauthorizedError}, {@link BadRequestError}, {@link WrongKindError}): a
 *   server refused the request for a reason another server would repeat, so the
 *   client did not fail over.
 * - {@link UnavailableError}: every server was tried and each failed; `attempts`
 *   says how.
 * - {@link MixError}: two of the servers can issue the same IDs of the
 *   namespace, so the client refuses it rather than hand out duplicates.
 * - {@link ClosedError}: the client was closed.
 *
 * A call whose own `signal` ends rejects with the signal's reason (an
 * `AbortError` or `TimeoutError` `DOMException`, as `fetch` does).
 */

/** The `code` of each error class. */
export type ErrorCode =
  | "unknown_namespace"
  | "unauthorized"
  | "bad_request"
  | "wrong_kind"
  | "unavailable"
  | "closed"
  | "mixed"
  | "invalid_options";

/** The base class of every error the client throws itself. */
export class FlurryError extends Error {
  /** What kind of error this is; stable, for programs to branch on. */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * An answer of a server that is an error: the Connect protocol's code and
 * message, or for an answer that is not a Connect error (a proxy's page, a
 * broken body), the code its HTTP status maps to.
 */
export class ServerError extends Error {
  /** The Connect code: "not_found", "unavailable", "invalid_argument", ... */
  readonly connectCode: string;
  /** The HTTP status of the answer; 0 when there was no HTTP answer. */
  readonly status: number;

  constructor(connectCode: string, message: string, status: number) {
    super(message);
    this.name = "ServerError";
    this.connectCode = connectCode;
    this.status = status;
  }
}

/**
 * A server refused the request for a reason that every server would repeat: the
 * client did not fail over, and retrying the same call will not help. The
 * subclass says which reason; `cause` is the server's answer (a
 * {@link ServerError}) or, for {@link WrongKindError}, what the client saw.
 */
export class RefusedError extends FlurryError {
  /** The namespace asked for. */
  readonly namespace: string;
  /** The server that refused. */
  readonly server: string;

  constructor(code: ErrorCode, namespace: string, server: string, detail: string, hint: string, cause: unknown) {
    super(code, `namespace ${JSON.stringify(namespace)} on ${server}: ${detail}; ${hint}`, { cause });
    this.namespace = namespace;
    this.server = server;
  }
}

/** The server does not know the namespace (Connect NOT_FOUND, HTTP 404). */
export class UnknownNamespaceError extends RefusedError {
  constructor(namespace: string, server: string, detail: string, cause: unknown) {
    super("unknown_namespace", namespace, server, detail,
      "check the namespace's name, and that the servers' configuration defines it", cause);
  }
}

/**
 * The server refused the token, or its absence (Connect UNAUTHENTICATED or
 * PERMISSION_DENIED, HTTP 401/403).
 */
export class UnauthorizedError extends RefusedError {
  constructor(namespace: string, server: string, detail: string, cause: unknown) {
    super("unauthorized", namespace, server, detail,
      "pass a token the namespace accepts (the token or tokens option)", cause);
  }
}

/**
 * The server refused the request itself (Connect INVALID_ARGUMENT or
 * OUT_OF_RANGE, HTTP 400), such as a count above its max_count or an ID that
 * is not one of the namespace's.
 */
export class BadRequestError extends RefusedError {
  constructor(namespace: string, server: string, detail: string, cause: unknown) {
    super("bad_request", namespace, server, detail,
      "ask for fewer IDs at once (the batch option, or the count) or fix the request", cause);
  }
}

/**
 * next or nextMany was called on a namespace that issues text IDs (uuidv7,
 * objectid), or nextText on one that issues integers.
 */
export class WrongKindError extends RefusedError {
  constructor(namespace: string, server: string, detail: string) {
    super("wrong_kind", namespace, server, detail,
      "use nextText for uuidv7 and objectid namespaces, next and nextMany for the others", undefined);
  }
}

/** One server's failure within an {@link UnavailableError}. */
export interface Attempt {
  /** The server's base URL. */
  readonly server: string;
  /** What went wrong: a network error, no answer in time, or the server's answer. */
  readonly error: Error;
}

/**
 * No server could issue IDs: each was tried, in failover order, and each failed
 * (refused the connection, did not answer within `timeoutMs`, answered
 * UNAVAILABLE because its namespace is exhausted, fenced or its store is down,
 * or answered something broken).
 */
export class UnavailableError extends FlurryError {
  /** The namespace asked for ("" for info about every namespace). */
  readonly namespace: string;
  /** One entry per server tried, in the order tried. */
  readonly attempts: readonly Attempt[];

  constructor(namespace: string, attempts: readonly Attempt[]) {
    const parts = attempts.map((a) => `${a.server}: ${a.error.message}`);
    const tried = parts.length > 0 ? `: ${parts.join("; ")}` : " (no server was tried)";
    super("unavailable",
      `no server could issue IDs of namespace ${JSON.stringify(namespace)}${tried}; check that the servers run and are reachable, then retry`,
      { cause: attempts[attempts.length - 1]?.error });
    this.namespace = namespace;
    this.attempts = attempts;
  }
}

/**
 * Two of the client's servers can issue the same IDs of the namespace: each
 * leases its node value from a store of its own (two servers left on the
 * embedded default, each with its own data directory), from two different
 * stores, or with different layouts. The client compares the servers' info
 * (namespace, layout, node fields, store identities) before it takes a server's
 * IDs for the first time, and refuses the namespace from then on.
 */
export class MixError extends FlurryError {
  /** The namespace asked for. */
  readonly namespace: string;
  /** The two servers' base URLs, in the order of the servers option. */
  readonly first: string;
  readonly second: string;
  /** Why their IDs can collide. */
  readonly reason: string;

  constructor(namespace: string, first: string, second: string, reason: string) {
    super("mixed",
      `servers ${first} and ${second} can issue the same IDs of namespace ${JSON.stringify(namespace)}, so the client uses neither for it: ${reason}; give the servers one shared store (or distinct fixed node values), or give the client only servers that share one`);
    this.namespace = namespace;
    this.first = first;
    this.second = second;
    this.reason = reason;
  }
}

/** The client was closed: create a new one to go on. */
export class ClosedError extends FlurryError {
  constructor() {
    super("closed", "the flurry client is closed; create a new Client to ask for more IDs");
  }
}

/** The options given to the Client, or to a call, are wrong. */
export class OptionsError extends FlurryError {
  constructor(message: string) {
    super("invalid_options", message);
  }
}
