import { buildDist } from "./support/build-dist.js";

// vitest's globalSetup: dist/ is built once, before any test file runs, for the tests that run
// the built CLI (test/support/built-cli.ts); a failed build stops the whole run with tsc's output.

export default async function setup(): Promise<void> {
  console.log(await buildDist(process.cwd()));
}
