import type { TestProject } from "vitest/node";
import { buildDist } from "./support/build-dist.js";

// vitest's globalSetup: dist/ is built once, before any test file runs, for the tests that run
// the built CLI (test/support/built-cli.ts); a failed build stops the whole run with tsc's output.
// In watch mode, again before each rerun (a source edit must not leave those tests on an old dist/).

export default async function setup(project: TestProject): Promise<void> {
  const build = async () => console.log(await buildDist(process.cwd()));
  await build();
  project.onTestsRerun(build);
}
