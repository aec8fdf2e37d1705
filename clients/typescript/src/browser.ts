/**
 * What a browser's failed fetch means. A browser that blocks a cross-origin
 * call (no CORS headers, or an origin the server does not list) gives the page
 * only a bare TypeError ("Failed to fetch", "NetworkError when attempting to
 * fetch resource.", "Load failed"), the same as for a server that is down, so
 * the client says which it most likely is.
 */

/**
 * e, a fetch's failure, with a message that names CORS when the page runs in a
 * browser on an origin other than baseURL's; otherwise e itself.
 */
export function explainFetchError(e: Error, baseURL: string): Error {
  const page = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  if (typeof page !== "string" || page === "null" || !(e instanceof TypeError) || (e as { cause?: unknown }).cause !== undefined) {
    return e; // not a page, or Node.js's fetch, whose cause says what failed
  }
  let server: string;
  try {
    server = new URL(baseURL).origin;
  } catch {
    return e;
  }
  if (server === page) {
    return e;
  }
  return new Error(
    `${e.message}: the browser blocked the call or could not reach the server; from a page on ${page}, ` +
      `a call to ${server} is most likely blocked by CORS: list ${page} in the server's cors.origins, or reach flurry through the page's own origin`,
    { cause: e },
  );
}
