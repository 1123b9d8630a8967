// Updates test/durations.json, the order in which the suite starts its files (longest first:
// test/support/longest-first.ts), from vitest's results cache: each file's duration in the last run
// that ran it replaces the list's; files the cache does not know keep theirs, deleted files leave.
// Run it after a whole quiet `npm test` when files were added or got much faster or slower; only
// the order matters, so a list some weeks old still serves.
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
const listFile = join("test", "durations.json");
const durations = existsSync(listFile) ? JSON.parse(readFileSync(listFile, "utf8")) : {};
for (const file of Object.keys(durations)) if (!existsSync(file)) delete durations[file];
for (const [key, { duration }] of entries) {
  const file = key.slice(key.indexOf(":") + 1);
  if (existsSync(file) && typeof duration === "number") durations[file] = Math.round(duration / 100) * 100;
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(listFile, JSON.stringify(sorted, null, 2) + "\n");
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
