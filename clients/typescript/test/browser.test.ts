// The client in a browser: headless Chromium loads browser-page.js from a small
// server here, which also passes the IDService's requests on to a real `flurry
// serve` (a page reaching it through its own origin, as behind a reverse
// proxy), or whose page calls flurry serve on another origin (CORS). The page
// posts what it saw to /result.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";

import { cleanup, flurryBinary, required, startServe, tempDir } from "./harness.js";

/** Every test ends by itself: a hang is a failure, not a stuck run. */
const bounded = { timeout: 180_000 };

after(cleanup);

const chromium = process.env["CHROMIUM"] ?? "/usr/bin/chromium";
/** .test-build/: test/browser-page.js and the library it imports from ../src/. */
const root = dirname(dirname(fileURLToPath(import.meta.url)));

function skipOrFail(t: { skip(msg: string): void }, msg: string): void {
  if (required) {
    throw new Error(`${msg}; FLURRY_TEST_REQUIRE=1 makes this a failure`);
  }
  t.skip(msg);
}

test("in headless Chromium: bigint IDs, none twice, decode exact, typed errors", bounded, async (t) => {
  const r = await inChromium(t, "proxy");
  if (r === undefined) {
    return;
  }
  assert.equal(r["error"], undefined, String(r["error"]));
  assert.deepEqual(r, want(r));
  t.diagnostic(`first ID in the browser: ${String(r["first"])}`);
});

test("in headless Chromium on another origin: flurry serve with that origin in cors.origins answers", bounded, async (t) => {
  const r = await inChromium(t, "cors");
  if (r === undefined) {
    return;
  }
  assert.equal(r["error"], undefined, String(r["error"]));
  assert.deepEqual(r, want(r));
});

test("in headless Chromium on another origin: without it in cors.origins the browser blocks the call", bounded, async (t) => {
  const r = await inChromium(t, "refused");
  if (r === undefined) {
    return;
  }
  assert.match(String(r["error"]), /fetch/i, JSON.stringify(r));
  // The client says what a browser's bare "Failed to fetch" most likely means.
  assert.match(String(r["error"]), /blocked by CORS: list http:\/\/127\.0\.0\.1:\d+ in the server's cors\.origins/, JSON.stringify(r));
  t.diagnostic(`the page saw: ${String(r["error"]).split("\n")[0]}`);
  assert.equal(r["count"], undefined);
});

function want(r: Record<string, unknown>): Record<string, unknown> {
  return {
    count: 20_000,
    unique: 20_000,
    increasing: true,
    above53: true,
    decodeExact: true,
    layoutAgrees: true,
    unknown: "unknown_namespace",
    first: r["first"],
  };
}

/**
 * Runs browser-page.js in headless Chromium and returns what it posted (or
 * undefined when skipped). proxy: the page's own server passes the calls on to
 * flurry serve; cors: the page calls flurry serve on its own port, which lists
 * the page's origin in cors.origins; refused: the same, with another origin
 * listed.
 */
async function inChromium(t: { skip(msg: string): void; diagnostic(msg: string): void }, mode: "proxy" | "cors" | "refused"): Promise<Record<string, unknown> | undefined> {
  if (!existsSync(chromium)) {
    skipOrFail(t, `${chromium} not installed (Debian: apt-get install chromium); the browser test needs it`);
    return undefined;
  }
  const got = await flurryBinary();
  if ("skip" in got) {
    skipOrFail(t, got.skip);
    return undefined;
  }
  let flurry!: URL;

  let deliver!: (body: string) => void;
  const result = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const page = `<!doctype html><meta charset="utf-8"><title>flurry client</title><script type="module" src="/test/browser-page.js"></script>`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/flurry.v1.IDService/")) {
      const up = request({ host: flurry.hostname, port: flurry.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on("error", (e) => {
        res.writeHead(502).end(String(e));
      });
      req.pipe(up);
      return;
    }
    if (path === "/result" && req.method === "POST") {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (d: string) => (body += d));
      req.on("end", () => {
        res.end("ok");
        deliver(body);
      });
      return;
    }
    if (path === "/") {
      res.writeHead(200, { "Content-Type": "text/html" }).end(page);
      return;
    }
    const file = normalize(join(root, path));
    if (file.startsWith(root + "/") && file.endsWith(".js") && existsSync(file)) {
      res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(file));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === "object");
  const origin = `http://127.0.0.1:${addr.port}`;
  const cors = mode === "proxy" ? "" : `cors: {origins: ["${mode === "cors" ? origin : "https://app.example.com"}"]}\n`;
  flurry = new URL((await startServe(got.bin, tempDir("leases"), cors)).url);
  const pageURL = mode === "proxy" ? `${origin}/` : `${origin}/?server=${encodeURIComponent(flurry.origin)}`;
  const browser = spawn(chromium, [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    `--user-data-dir=${tempDir("chromium")}`, pageURL,
  ], { stdio: ["ignore", "ignore", "pipe"], detached: true });
  let log = "";
  browser.stderr!.setEncoding("utf8");
  browser.stderr!.on("data", (d: string) => (log += d));
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const body = await Promise.race([
      result,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no result from the page within 60 s; Chromium said:\n${log}`)), 60_000);
      }),
    ]);
    return JSON.parse(body) as Record<string, unknown>;
  } finally {
    clearTimeout(timer);
    try {
      process.kill(-browser.pid!, "SIGKILL"); // Chromium and its helper processes
    } catch {
      // already gone
    }
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
