import { describe, expect, it } from "vitest";
import { orderLongestFirst } from "./longest-first.js";

describe("orderLongestFirst", () => {
  it("starts the longest files first and files without a duration before all", () => {
    const order = orderLongestFirst(["test/a.test.ts", "test/new.test.ts", "test/b.test.ts"], {
      "test/a.test.ts": 100,
      "test/b.test.ts": 900,
    });
    expect(order).toEqual(["test/new.test.ts", "test/b.test.ts", "test/a.test.ts"]);
  });

  it("never starts a lease-timed file within two of another while other files are left", () => {
    const durations = {
      "test/chaos/a.e2e.test.ts": 40,
      "test/chaos/b.e2e.test.ts": 39,
      "test/lock/c.test.ts": 38,
      "test/cli/d.test.ts": 30,
      "test/cli/e.test.ts": 20,
      "test/cli/f.test.ts": 10,
    };
    expect(orderLongestFirst(Object.keys(durations), durations)).toEqual([
      "test/chaos/a.e2e.test.ts",
      "test/cli/d.test.ts",
      "test/cli/e.test.ts",
      "test/chaos/b.e2e.test.ts",
      "test/cli/f.test.ts",
      "test/lock/c.test.ts",
    ]);
  });
});
