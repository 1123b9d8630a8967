import { describe, expect, it } from "vitest";
import { buildSnapshot, emptySnapshot } from "../../../src/controller/snapshot/desired.js";
import { planScan } from "../../../src/controller/snapshot/scan-changes.js";
import { loaded, problem, snapshotOf, status } from "../fixtures.js";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");

describe("planScan", () => {
  it("queues new and edited objects only", () => {
    const before = snapshotOf([loaded("a.yaml", "alpha"), loaded("b.yaml", "beta")]);
    const after = snapshotOf([
      loaded("a.yaml", "alpha"),
      loaded("b.yaml", "beta", "img/beta:2"),
      loaded("c.yaml", "gamma"),
    ]);
    const outcome = planScan(before, after, new Map(), NOW);
    expect(outcome.changed.sort()).toEqual(["Deployment/beta", "Deployment/gamma"]);
    expect(outcome.removed).toEqual([]);
    expect(outcome.reportProblems).toBe(false);
    expect(planScan(emptySnapshot(), before, new Map(), NOW).changed).toHaveLength(2);
  });

  it("marks an object whose file broke as Failed with the first problem, and only a deletion as removed", () => {
    const before = snapshotOf([loaded("a.yaml", "alpha"), loaded("b.yaml", "beta")]);
    const after = snapshotOf(
      [],
      [problem("a.yaml", 7, "unknown field spec.x"), problem("a.yaml", 9, "second problem")],
    );
    const statuses = new Map([["Deployment/alpha", status("alpha")]]);
    const outcome = planScan(before, after, statuses, NOW);
    expect(outcome.reportProblems).toBe(true);
    expect(outcome.removed).toEqual([
      {
        key: "Deployment/alpha",
        invalid: true,
        record: {
          ...status("alpha"),
          sync: "Failed",
          last_error: "invalid manifest a.yaml:7:3: unknown field spec.x",
          updated_at: "2026-03-01T12:00:00.000Z",
        },
      },
      // beta's file is fine (deleted): dropped without a record; no status, nothing to mark either
      { key: "Deployment/beta", invalid: false, record: null },
    ]);
    expect(statuses.get("Deployment/alpha")?.sync).toBe("Synced"); // input untouched
  });

  it("does not invent a record for a never-reconciled object whose file broke", () => {
    const before = snapshotOf([loaded("a.yaml", "alpha")]);
    const after = snapshotOf([], [problem("a.yaml", 2, "bad")]);
    expect(planScan(before, after, new Map(), NOW).removed).toEqual([
      { key: "Deployment/alpha", invalid: true, record: null },
    ]);
  });

  it("reports problems again when they are fixed", () => {
    const broken = snapshotOf([], [problem("a.yaml", 2, "bad")]);
    const fixed = snapshotOf([loaded("a.yaml", "alpha")]);
    const outcome = planScan(broken, fixed, new Map(), NOW);
    expect(outcome.reportProblems).toBe(true);
    expect(outcome.changed).toEqual(["Deployment/alpha"]);
  });
});

describe("source contents in the snapshot digest", () => {
  it("makes an object changed when only its source directory's digest changed", () => {
    const manifests = [loaded("docs.yaml", "docs"), loaded("b.yaml", "beta")];
    const before = snapshotOf(manifests);
    const withSource = (digest: string) =>
      buildSnapshot({ manifests, problems: [] }, new Map([["Deployment/docs", digest]]));
    expect(planScan(withSource("sha-1"), withSource("sha-1"), new Map(), NOW).changed).toEqual([]);
    expect(planScan(withSource("sha-1"), withSource("sha-2"), new Map(), NOW).changed).toEqual([
      "Deployment/docs",
    ]);
    expect(planScan(before, withSource("sha-1"), new Map(), NOW).changed).toEqual(["Deployment/docs"]);
  });
});
