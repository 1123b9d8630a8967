import { describe, expect, it } from "vitest";
import { findRemovedFromGit } from "../../src/controller/drift-sweep.js";
import type { Deployment } from "../../src/schema/deployment.js";
import { loaded, problem, snapshotOf, status } from "./fixtures.js";

const live = (...names: string[]) => new Map(names.map((n) => [n, { name: n } as Deployment]));

describe("findRemovedFromGit", () => {
  const statuses = new Map([
    ["Deployment/alpha", status("alpha")],
    ["Deployment/beta", status("beta")],
    ["Deployment/gone", status("gone")],
    ["OrganizationAccess/org", status("org", { kind: "OrganizationAccess" })],
  ]);

  it("lists managed deployments still live but no longer in git", () => {
    const snapshot = snapshotOf([loaded("a.yaml", "alpha")]);
    const found = findRemovedFromGit(snapshot, statuses, live("alpha", "beta", "org", "unmanaged"));
    // gone is not live any more; org is not a Deployment; unmanaged has no record
    expect(found.map((s) => s.name)).toEqual(["beta"]);
  });

  it("reports nothing while a manifest is invalid (the object may be in the broken file)", () => {
    const snapshot = snapshotOf([loaded("a.yaml", "alpha")], [problem("b.yaml", 1, "bad")]);
    expect(findRemovedFromGit(snapshot, statuses, live("alpha", "beta"))).toEqual([]);
  });
});
