import { describe, expect, it } from "vitest";
import { planPrune } from "../../../src/diff/plan/plan-prune.js";
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
