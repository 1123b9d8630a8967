import { describe, expect, it } from "vitest";
import { planExitCode } from "../../src/cli/sync/plan.js";
import type { Plan } from "../../src/diff/plan/plan-types.js";

// plan --detailed-exitcode: 2 when apply (with the same flags) would change something. With
// --prune a deletion is such a change: "1 to delete" exited 0, and a CI job gating apply --prune on
// the exit code skipped it.

const plan = (summary: Partial<Plan["summary"]>): Plan => ({
  format_version: "1",
  summary: { create: 0, update: 0, noop: 1, refused: 0, ...summary },
  changes: [],
});

describe("plan's exit code", () => {
  it("--prune: a deletion is a change (2); without --prune a deployment removed from git is kept (0)", () => {
    expect(planExitCode(plan({ delete: 1 }), true)).toBe(2);
    expect(planExitCode(plan({ orphan: 1 }), true)).toBe(0);
    expect(planExitCode(plan({ delete: 1 }), false)).toBe(0);
  });

  it("creates and updates are changes; nothing to do is 0", () => {
    expect(planExitCode(plan({ create: 1 }), true)).toBe(2);
    expect(planExitCode(plan({ update: 1 }), true)).toBe(2);
    expect(planExitCode(plan({}), true)).toBe(0);
  });
});
