import type { TestProject } from "vitest/node";
import { buildDist } from "./support/build-dist.js";

// vitest's globalSetup: dist/ is built once, before any test file runs, for the tests that run
// the built CLI (test/support/built-cli.ts); a failed build stops the whole run with tsc's output.
// In watch mode, again before each rerun (a source edit must not leave those tests on an old dist/).

// Each project of vitest.config.ts runs this setup: the first build of a run is shared through
// vitest's own process (a second concurrent tsc into the same dist/ would only cost time).
const FIRST_BUILD = Symbol.for("plumb.test.firstDistBuild");
type WithBuild = typeof globalThis & { [FIRST_BUILD]?: Promise<void> };

export default async function setup(project: TestProject): Promise<void> {
  const build = async () => console.log(await buildDist(process.cwd()));
  const shared = globalThis as WithBuild;
  await (shared[FIRST_BUILD] ??= build());
  project.onTestsRerun(build);
}
