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

// Files whose tests judge leases and pauses in real time. Most of the longest files are such, so
// longest first alone would start four of them at once, each with controllers and git pushes of its
// own; they are spread instead (at most one in any three files started in a row), still among the
// first to start.
const LEASE_TIMED = /^test\/(chaos|lock)\/|controller-stop-cloning|leader-/;

/** The files' order: longest first, lease-timed files spread apart, ties by path. */
export function orderLongestFirst(
  keys: readonly string[],
  durations: Readonly<Record<string, number>>,
): string[] {
  const ms = (key: string) => durations[key] ?? Number.POSITIVE_INFINITY;
  const pending = [...keys].sort((a, b) => ms(b) - ms(a) || (a < b ? -1 : a > b ? 1 : 0));
  const order: string[] = [];
  while (pending.length > 0) {
    const recentTimed = order.slice(-2).some((key) => LEASE_TIMED.test(key));
    const index = recentTimed ? pending.findIndex((key) => !LEASE_TIMED.test(key)) : 0;
    order.push(...pending.splice(index === -1 ? 0 : index, 1));
  }
  return order;
}

export class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) => relative(root, spec.moduleId).split("\\").join("/");
    const byProject = (isolate: boolean) => {
      const specs = new Map(
        files.filter((spec) => spec.project.config.isolate === isolate).map((s) => [key(s), s]),
      );
      return orderLongestFirst([...specs.keys()], DURATIONS).map((k) => specs.get(k)!);
    };
    return Promise.resolve([...byProject(true), ...byProject(false)]);
  }
}
