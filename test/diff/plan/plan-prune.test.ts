import { describe, expect, it } from "vitest";
import { planPrune, withPrune } from "../../../src/diff/plan/plan-prune.js";
import type { Plan } from "../../../src/diff/plan/plan-types.js";
import type { Deployment } from "../../../src/schema/deployment.js";

const live = (name: string) => ({ id: `id-${name}`, name }) as Deployment;
const record = (name: string, file?: string | null) => ({
  kind: "Deployment",
  name,
  id: `id-${name}`,
  ...(file === undefined ? {} : { manifest_file: file }),
});

describe("planPrune scope", () => {
  const records = [record("a", "a.yaml"), record("b", "b.yaml"), record("c", "sub/c.yaml"), record("old")];
  const all = [live("a"), live("b"), live("c"), live("old")];

  it("a read of the whole directory judges every record", () => {
    expect(planPrune(records, new Set(), all, true).map((p) => p.name)).toEqual(["a", "b", "c", "old"]);
  });

  it("a read of one file judges only the records of that file (never one without a recorded file)", () => {
    const planned = planPrune(records, new Set(["Deployment/x"]), all, true, { file: "a.yaml" });
    expect(planned).toEqual([{ kind: "Deployment", name: "a", id: "id-a", action: "delete" }]);
    expect(planPrune(records, new Set(["Deployment/a"]), all, true, { file: "a.yaml" })).toEqual([]);
  });

  it("never a deployment gone or renamed since", () => {
    const renamed = [{ ...live("b"), name: "other" }];
    expect(planPrune([record("b", "b.yaml")], new Set(), renamed, true)).toEqual([]);
  });
});

describe("planPrune: what is deleted, what is kept", () => {
  it("without --prune every gone manifest is an orphan; with it, a deletion; sorted by name", () => {
    const records = [record("b"), record("c"), record("a")];
    const all = [live("c"), live("a"), live("b")];
    expect(planPrune(records, new Set(), all, false)).toEqual([
      { kind: "Deployment", name: "a", id: "id-a", action: "orphan" },
      { kind: "Deployment", name: "b", id: "id-b", action: "orphan" },
      { kind: "Deployment", name: "c", id: "id-c", action: "orphan" },
    ]);
    expect(planPrune(records, new Set(), all, true).map((p) => `${p.name}:${p.action}`)).toEqual([
      "a:delete",
      "b:delete",
      "c:delete",
    ]);
  });

  it("plumb/prune: disabled keeps it an orphan even with --prune, and says why", () => {
    const kept = { ...record("a"), prune: "disabled" as const };
    const expected = {
      kind: "Deployment",
      name: "a",
      id: "id-a",
      action: "orphan",
      refused: "its manifest said plumb/prune: disabled",
    };
    expect(planPrune([kept], new Set(), [live("a")], true)).toEqual([expected]);
    expect(planPrune([kept], new Set(), [live("a")], false)).toEqual([expected]);
    expect(planPrune([{ ...record("a"), prune: null }], new Set(), [live("a")], true)).toEqual([
      { kind: "Deployment", name: "a", id: "id-a", action: "delete" },
    ]);
  });

  it("never deletes an organization (released with --prune, else kept), nor a record never created", () => {
    const organization = { kind: "OrganizationAccess", name: "org", id: "id-org" };
    const pruned = planPrune([organization], new Set(), [live("org")], true);
    expect(pruned).toMatchObject([{ kind: "OrganizationAccess", name: "org", action: "release" }]);
    expect(pruned[0]!.refused).toContain(
      "this apply stops managing them (drops the status record, sends nothing)",
    );
    const kept = planPrune([organization], new Set(), [], false);
    expect(kept).toMatchObject([{ kind: "OrganizationAccess", action: "orphan" }]);
    expect(kept[0]!.refused).toContain("apply --prune stops managing them");
    expect(planPrune([organization], new Set(["OrganizationAccess/org"]), [], true)).toEqual([]);
    expect(
      withPrune(
        { format_version: "1", summary: { create: 0, update: 0, noop: 0, refused: 0 }, changes: [] },
        pruned,
      ).summary,
    ).toMatchObject({ orphan: 1, delete: 0 });
    const neverCreated = { kind: "Deployment", name: "a", id: null };
    expect(planPrune([neverCreated], new Set(), [live("a")], true)).toEqual([]);
  });
});

describe("withPrune", () => {
  it("counts orphans and deletions in the summary, next to the changes' counts", () => {
    const plan: Plan = {
      format_version: "1",
      summary: { create: 1, update: 2, noop: 3, refused: 0 },
      changes: [],
    };
    const prune = planPrune(
      [record("a"), record("b"), { ...record("c"), prune: "disabled" as const }],
      new Set(),
      [live("a"), live("b"), live("c")],
      true,
    );
    const out = withPrune(plan, prune);
    expect(out.summary).toEqual({ create: 1, update: 2, noop: 3, refused: 0, orphan: 1, delete: 2 });
    expect(out.prune).toBe(prune);
    expect(out.changes).toBe(plan.changes);
    expect(withPrune(plan, []).summary).toEqual({ ...plan.summary, orphan: 0, delete: 0 });
  });
});
