import { join } from "node:path";
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
  // Node's compile cache for every process the run starts (vitest's workers, which inherit this
  // environment, and the built CLIs, git-driven controllers and servers they spawn): the suite
  // starts a few hundred; on spawn-heavy files it saved 10-13% of their CPU (docs/testing.md
  // "Speed"). In the project's own node_modules/.cache, not a directory shared in /tmp; Node 20
  // ignores it.
  process.env.NODE_COMPILE_CACHE ??= join(process.cwd(), "node_modules", ".cache", "node-compile-cache");
  const build = async () => console.log(await buildDist(process.cwd()));
  const shared = globalThis as WithBuild;
  await (shared[FIRST_BUILD] ??= build());
  project.onTestsRerun(build);
}
