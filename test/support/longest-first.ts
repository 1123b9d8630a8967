import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Starts the test files longest first, by the durations in test/durations.json (a whole run's, written
// by `node scripts/test-durations.mjs`). Without it, a clean clone (CI) has no vitest results cache
// and vitest starts the largest files first: runnable.e2e, the longest file and one of the smallest,
// started last and ran on alone for about 35 s (docs/testing.md "Speed"). Files not in the list
// (new ones) start first, as vitest starts files it has no result for; the isolated project's files
// still run before the shared ones.
const DURATIONS: Record<string, number> = JSON.parse(
  readFileSync(new URL("../durations.json", import.meta.url), "utf8"),
) as Record<string, number>;

export class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) => relative(root, spec.moduleId).split("\\").join("/");
    const ms = (spec: TestSpecification) => DURATIONS[key(spec)] ?? Number.POSITIVE_INFINITY;
    const sorted = [...files].sort((a, b) => {
      const projects = Number(b.project.config.isolate) - Number(a.project.config.isolate);
      if (projects !== 0) return projects;
      const longer = ms(b) - ms(a);
      if (longer !== 0 && !Number.isNaN(longer)) return longer;
      return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
    });
    return Promise.resolve(sorted);
  }
}
