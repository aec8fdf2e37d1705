// A measurement, not a test: what the client costs per ID against a running
// flurry serve. Run by hand:
//
//   flurry serve --data /tmp/fd --listen 127.0.0.1:18190 &
//   FLURRY_URL=http://127.0.0.1:18190 npm run bench
//
// It prints one line per case: IDs, seconds, nanoseconds per ID, the client's own
// CPU time per ID (user + system of this process: what the client costs, whatever
// else the machine is doing), requests sent.

import { Client } from "../src/index.js";

const url = process.env["FLURRY_URL"] ?? "http://127.0.0.1:8080";
const ns = process.env["FLURRY_NAMESPACE"] ?? "default";

async function measure(name: string, ids: number, run: (c: Client) => Promise<void>): Promise<void> {
  const c = new Client({ servers: [url] });
  try {
    await c.next(ns); // first contact, outside the measurement
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await run(c);
    const cpu = process.cpuUsage(cpu0);
    const s = (performance.now() - t0) / 1000;
    const cpuNs = ((cpu.user + cpu.system) * 1000) / ids;
    const requests = c.stats()[0]!.requests - 1;
    console.log(`${name.padEnd(44)} ${String(ids).padStart(9)} IDs  ${s.toFixed(3)} s  ${((s * 1e9) / ids).toFixed(0).padStart(6)} ns/ID  CPU ${cpuNs.toFixed(0).padStart(5)} ns/ID  ${requests} requests`);
  } finally {
    await c.close();
  }
}

const n = 1_000_000;
await measure("next(), one caller", n, async (c) => {
  for (let i = 0; i < n; i++) {
    await c.next(ns);
  }
});
await measure("next(), 64 concurrent callers", n, async (c) => {
  let left = n;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (left-- > 0) {
      await c.next(ns);
    }
  }));
});
await measure("nextMany(1000), one caller", n, async (c) => {
  for (let i = 0; i < n / 1000; i++) {
    await c.nextMany(ns, 1000);
  }
});
await measure("fetch(100000), unbuffered, one caller", 20 * 100_000, async (c) => {
  for (let i = 0; i < 20; i++) {
    await c.fetch(ns, 100_000);
  }
});
