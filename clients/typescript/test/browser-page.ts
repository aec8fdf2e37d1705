// The page browser.test.ts loads in headless Chromium: the library as a browser
// runs it (ES modules, the browser's fetch and atob, no Node.js Buffer), against
// flurry served from the page's own origin. It posts what it saw to /result.

import { Client, UnknownNamespaceError } from "../src/index.js";

interface Result {
  count?: number;
  unique?: number;
  increasing?: boolean;
  above53?: boolean;
  decodeExact?: boolean;
  layoutAgrees?: boolean;
  unknown?: string;
  first?: string;
  error?: string;
}

async function main(): Promise<Result> {
  const out: Result = {};
  // ?server= names a flurry server on another origin (CORS); by default the
  // page's own origin passes the calls on.
  const server = new URLSearchParams(location.search).get("server") ?? location.origin;
  const c = new Client({ servers: [server], batch: 500, timeoutMs: 5000 });
  try {
    const per: bigint[][] = Array.from({ length: 8 }, () => []);
    await Promise.all(per.map(async (mine) => {
      for (let i = 0; i < 2500; i++) {
        mine.push(await c.next("default"));
      }
    }));
    const ids = per.flat();
    out.count = ids.length;
    out.unique = new Set(ids).size;
    out.increasing = per.every((mine) => mine.every((id, i) => i === 0 || id > mine[i - 1]!));
    out.above53 = ids.every((id) => id > 2n ** 53n);
    out.first = ids[0]!.toString();
    const d = await c.decode("default", ids[0]!);
    out.decodeExact = d.id === ids[0]!.toString();
    const layout = await c.layout("default");
    const local = layout?.decode(ids[0]!);
    out.layoutAgrees = local !== undefined && local.time.getTime() === d.time?.getTime() &&
      local.sequence === d.sequence && JSON.stringify(local.fields.map((f) => [f.name, String(f.value)])) ===
      JSON.stringify(d.fields.map((f) => [f.name, String(f.value)]));
    try {
      await c.next("nope");
      out.unknown = "no error";
    } catch (e) {
      out.unknown = e instanceof UnknownNamespaceError ? e.code : String(e);
    }
  } finally {
    await c.close();
  }
  return out;
}

let result: Result;
try {
  result = await main();
} catch (e) {
  result = { error: e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ""}` : String(e) };
}
await fetch("/result", { method: "POST", body: JSON.stringify(result) });
