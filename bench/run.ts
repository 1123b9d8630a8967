import { readdir } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { baselineMs } from "./baseline.js";

/**
 * `npm run bench`: runs every bench/*.bench.ts (compiled to dist/bench/*.bench.js). Each exports
 * `run(): Promise<string[]>` returning the lines to print (figures against their targets, each also
 * as a ratio to the baseline measured first in the same run: bench/baseline.ts).
 */
const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const files = (await readdir(here))
  .filter((f) => f.endsWith(".bench.js") && (!only || f.includes(only)))
  .sort();
const baseline = await baselineMs();
console.log(
  `baseline (reference workload: JSON and sha256 of 20,000 small documents, median of 5): ${baseline.toFixed(1)} ms`,
);
for (const file of files) {
  const mod = (await import(pathToFileURL(`${here}/${file}`).href)) as { run: () => Promise<string[]> };
  console.log(`== ${file.replace(/\.bench\.js$/, "")}`);
  for (const line of await mod.run()) console.log(`  ${line}`);
}
