// Writes test/durations.json, the order in which the suite starts its files (longest first:
// test/support/longest-first.ts), from vitest's results cache: each file's duration in the last run
// that ran it. Refresh it after a whole quiet `npm test` when files were added or got much faster or
// slower; only the order matters, so a list some weeks old still serves.
import { readdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const cacheDir = join("node_modules", ".vite", "vitest");
const results = readdirSync(cacheDir)
  .map((name) => join(cacheDir, name, "results.json"))
  .filter((file) => existsSync(file));
if (results.length !== 1) {
  process.stderr.write(`expected one vitest results cache under ${cacheDir}, found ${results.length}\n`);
  process.exit(1);
}
const { results: entries } = JSON.parse(readFileSync(results[0], "utf8"));
const durations = {};
for (const [key, { duration }] of entries) {
  const file = key.slice(key.indexOf(":") + 1);
  if (existsSync(file) && typeof duration === "number") durations[file] = Math.round(duration / 100) * 100;
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join("test", "durations.json"), JSON.stringify(sorted, null, 2) + "\n");
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
