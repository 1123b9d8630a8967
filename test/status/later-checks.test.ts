import { describe, expect, it } from "vitest";
import type { ChecksRecord } from "../../src/status/checks/checks-record.js";
import { laterChecks } from "../../src/status/checks/checks-record-problems.js";

// promote judges the checks that finished last among PATH's store and the stores nearby
// (docs/environments.md "Promotion"): a revision verified again elsewhere has a newer verdict.

const checks = (at: string, passed: number): ChecksRecord => ({
  revision_id: "r1",
  at,
  runs: 1,
  passed,
  pass_ratio: passed,
  latency_ms: { p50: 1, p95: 1, max: 1 },
});

describe("laterChecks", () => {
  const early = checks("2026-01-01T00:00:00Z", 1);
  const late = checks("2026-01-01T00:00:01Z", 0);

  it("takes the one that finished last, whichever side it is on", () => {
    expect(laterChecks(early, late)).toBe(late);
    expect(laterChecks(late, early)).toBe(late);
  });

  it("keeps the first on a tie and takes either side alone", () => {
    const twin = checks(early.at, 0);
    expect(laterChecks(early, twin)).toBe(early);
    expect(laterChecks(undefined, late)).toBe(late);
    expect(laterChecks(null, null)).toBeUndefined();
    expect(laterChecks(early, undefined)).toBe(early);
  });

  it("counts a time that does not parse as earliest", () => {
    const broken = checks("not a time", 0);
    expect(laterChecks(broken, early)).toBe(early);
    expect(laterChecks(early, broken)).toBe(early);
  });
});
