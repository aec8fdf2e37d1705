// The published package as npm packs it: every source map's sources are in the
// package, so a debugger or a stack-trace tool that follows a map finds the file.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

/** The package directory: the tests run from .test-build/test. */
const pkg = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("every source map in the package points to files the package ships", { timeout: 120_000 }, async () => {
  // --ignore-scripts: npm test has just built dist/; prepack would build it again.
  const out = await new Promise<string>((resolve, reject) =>
    execFile("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkg }, (err, stdout, stderr) =>
      err ? reject(new Error(`npm pack: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
  const [packed] = JSON.parse(out) as { files: { path: string }[] }[];
  const files = new Set(packed!.files.map((f) => f.path));
  const maps = [...files].filter((f) => f.endsWith(".map"));
  assert.ok(maps.length > 0, "the package has no source maps");
  for (const m of maps) {
    const map = JSON.parse(await readFile(join(pkg, m), "utf8")) as { sources: string[]; sourceRoot?: string };
    for (const s of map.sources) {
      const path = normalize(join(dirname(m), map.sourceRoot ?? "", s));
      assert.ok(files.has(path), `${m} points to ${path}, which the package does not ship`);
    }
  }
});
