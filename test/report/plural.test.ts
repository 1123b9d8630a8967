import { describe, expect, it } from "vitest";
import { count } from "../../src/report/plural.js";
import type { DriftReport } from "../../src/reconcile/drift.js";
import { formatDriftMarkdown, formatDriftText } from "../../src/report/format-drift.js";

const report = (items: number, inSync: number, pending = false): DriftReport => ({
  format_version: "1",
  in_sync: items === 0,
  drifted: items > 0 && !pending,
  summary: {
    differs: 0,
    refused: 0,
    missing: pending ? items : 0,
    vanished: pending ? 0 : items,
    "removed-from-git": 0,
    in_sync: inSync,
    pending: pending ? items : 0,
  },
  items: Array.from({ length: items }, (_, i) => ({
    kind: "Deployment" as const,
    name: `d-${i}`,
    id: null,
    reason: pending ? ("missing" as const) : ("vanished" as const),
    origin: pending ? ("change" as const) : ("drift" as const),
    fields: [],
    field_origins: {},
    file: "d.yaml",
    line: 1,
    change: null,
  })),
  not_checked: [],
});

describe("counts in summaries", () => {
  it("count() says one thing once and several in the plural", () => {
    expect(count(0, "object")).toBe("0 objects");
    expect(count(1, "object")).toBe("1 object");
    expect(count(2, "object")).toBe("2 objects");
    expect(count(1, "more change", "more changes")).toBe("1 more change");
  });

  it("drift summaries agree with their numbers", () => {
    expect(formatDriftText(report(1, 0))).toContain("Drift: 1 object (1 vanished); 0 in sync.");
    expect(formatDriftText(report(2, 1))).toContain("Drift: 2 objects (2 vanished); 1 in sync.");
    expect(formatDriftText(report(1, 2, true))).toContain("No drift: 2 objects match git; 1 object pending");
    expect(formatDriftText(report(2, 1, true))).toContain(
      "No drift: 1 object matches git; 2 objects pending",
    );
    expect(formatDriftText(report(0, 1))).toContain("No drift: 1 object matches git.");
    expect(formatDriftMarkdown(report(0, 3))).toContain("No drift: 3 objects match git.");
  });
});
