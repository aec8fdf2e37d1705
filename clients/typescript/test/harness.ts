// Real flurry servers for the tests: the flurry binary built from this
// repository (or FLURRY_BIN), `flurry serve` processes on free loopback ports
// with configurations in temporary directories, and a TCP listener that accepts
// connections and never answers. Everything started here is stopped by cleanup().

import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Whether FLURRY_TEST_REQUIRE=1 turns a skip (a missing tool) into a failure, as in CI. */
export const required = process.env["FLURRY_TEST_REQUIRE"] === "1";

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs every cleanup registered, last first. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (e) {
      console.error("cleanup:", e);
    }
  }
}

/** A temporary directory, removed by cleanup. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `flurry-ts-${prefix}-`));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** The repository's root: the nearest directory above this file whose go.mod is flurry's. */
export function repoRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const mod = join(d, "go.mod");
    if (existsSync(mod) && readFileSync(mod, "utf8").startsWith("module github.com/flurryid/flurry\n")) {
      return d;
    }
    const up = dirname(d);
    if (up === d) {
      throw new Error("the flurry repository's go.mod is not above the tests; run them from clients/typescript in a checkout, or set FLURRY_BIN");
    }
    d = up;
  }
}

/**
 * The flurry binary: FLURRY_BIN if set, else `go build ./cmd/flurry` into a
 * temporary directory (the lean build: file stores, all these tests need). It
 * returns a reason to skip when Go is not installed.
 */
export async function flurryBinary(): Promise<{ bin: string } | { skip: string }> {
  const given = process.env["FLURRY_BIN"];
  if (given !== undefined && given !== "") {
    return { bin: given };
  }
  const bin = join(tempDir("bin"), "flurry");
  const go = process.env["GO"] ?? "go";
  try {
    await run(go, ["build", "-o", bin, "./cmd/flurry"], repoRoot(), 8 * 60_000);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ENOENT") {
      return { skip: `go not installed (${go}); the tests build the flurry binary with it, or set FLURRY_BIN to one` };
    }
    throw e;
  }
  return { bin };
}

function run(cmd: string, args: string[], cwd: string, timeout: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout, maxBuffer: 16 << 20 }, (err, _stdout, stderr) => {
      if (err !== null) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          reject(err);
          return;
        }
        reject(new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stderr}`));
        return;
      }
      resolve();
    });
  });
}

/** A free TCP port on 127.0.0.1 (free when asked; the server binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => (addr !== null && typeof addr === "object" ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** A running `flurry serve`. */
export interface Serve {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Everything it wrote to stderr so far. */
  log(): string;
  /** Sends a signal (SIGKILL waits until the process is gone). */
  signal(sig: NodeJS.Signals): Promise<void>;
}

/** The token of the namespace "secret" in serve's configuration. */
export const secretToken = "typescript-client-test-token";

/**
 * Starts `flurry serve` with these namespaces and waits until /readyz answers
 * 200:
 *   default  snowflake, the embedded default's layout, its worker leased from leaseDir
 *   twitter  snowflake, Twitter's layout, datacenter 1, worker leased from leaseDir
 *   segment  segment, created with step 1000 in the server's own data directory
 *   sessions uuidv7
 *   secret   snowflake that needs the token secretToken
 *   small    snowflake with max_count 100
 * Servers given the same leaseDir lease distinct node values, so their IDs
 * never collide.
 */
export async function startServe(bin: string, leaseDir: string, extra = ""): Promise<Serve> {
  const dir = tempDir("serve");
  const port = await freePort();
  const store = `file://${leaseDir}`;
  const conf = join(dir, "flurry.yaml");
  writeFileSync(conf, `${extra}listen: 127.0.0.1:${port}
data_dir: ${join(dir, "data")}
access: {public_readyz: true}
namespaces:
  default:
    strategy: snowflake
    snowflake: {lease: {store: "${store}"}}
  twitter:
    strategy: snowflake
    snowflake: {layout: twitter, node: datacenter=1, lease: {store: "${store}"}}
  segment:
    strategy: segment
    segment: {create: {step: 1000}}
  sessions:
    strategy: uuidv7
  secret:
    strategy: snowflake
    tokens: ["${secretToken}"]
    snowflake: {lease: {store: "${store}"}}
  small:
    strategy: snowflake
    max_count: 100
    snowflake: {lease: {store: "${store}"}}
`);
  return spawnServe(bin, ["serve", "--config", conf], port);
}

/**
 * Starts `flurry serve` on the embedded default (no configuration: the
 * "default" snowflake namespace leased from a file store and the "segment"
 * namespace, both in a data directory of its own), and waits until /readyz
 * answers 200.
 */
export async function startServeDefault(bin: string): Promise<Serve> {
  const port = await freePort();
  return spawnServe(bin, ["serve", "--data", join(tempDir("default"), "data"), "--listen", `127.0.0.1:${port}`], port);
}

export async function spawnServe(bin: string, args: string[], port: number): Promise<Serve> {
  const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr!.setEncoding("utf8");
  proc.stderr!.on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const serve: Serve = {
    url,
    proc,
    log: () => stderr,
    signal: async (sig) => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill(sig);
        if (sig === "SIGKILL") {
          await exited;
        }
      }
    },
  };
  cleanups.push(async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      return;
    }
    proc.kill("SIGCONT"); // a test may have stopped it
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  });
  const deadline = Date.now() + 30_000;
  let last = "";
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`flurry serve exited with ${proc.exitCode} before it was ready:\n${stderr}`);
    }
    try {
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      await r.text();
      if (r.status === 200) {
        return serve;
      }
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = String(e);
    }
    if (Date.now() > deadline) {
      throw new Error(`flurry serve at ${url} not ready after 30 s (last: ${last}):\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A TCP listener on 127.0.0.1 that accepts connections, reads them, and never answers. */
export async function startHung(): Promise<{ url: string; accepted(): number }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("data", () => {});
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  if (addr === null || typeof addr !== "object") {
    throw new Error("no address");
  }
  cleanups.push(() => new Promise<void>((resolve) => {
    for (const s of sockets) {
      s.destroy();
    }
    server.close(() => resolve());
  }));
  return { url: `http://127.0.0.1:${addr.port}`, accepted: () => accepted };
}
