import { describe, expect, it } from "vitest";
import type { Deployment } from "../../src/schema/deployment.js";
import type { Revision } from "../../src/schema/revision.js";
import { evaluateGates, formatDuration, type SourceFacts, soakMs } from "../../src/promote/gates.js";

const DEPLOYED_AT = "2026-11-25T10:00:00.000Z";
const revision: Revision = {
  id: "rev-2",
  status: "DEPLOYED",
  source: "gitrepo",
  created_at: "2026-11-25T09:58:00.000Z",
  updated_at: DEPLOYED_AT,
  source_revision_config: { repo_ref: "refs/tags/v1.5.0", graph_config_path: "langgraph.json" },
  status_message: null,
};
const deployment = {
  id: "d-1",
  name: "support-agent",
  latest_revision_id: "rev-2",
  active_revision_id: "rev-2",
} as Deployment;
const checks = {
  revision_id: "rev-2",
  at: DEPLOYED_AT,
  runs: 10,
  passed: 10,
  pass_ratio: 1,
  latency_ms: { p50: 300, p95: 900, max: 1000 },
};
const facts = (over: Partial<SourceFacts> = {}): SourceFacts => ({
  deployment,
  revision,
  change: { action: "noop", fields: [], revision_fields: [], in_place_fields: [] },
  pending: false,
  checks,
  now: { ms: Date.parse(DEPLOYED_AT) + 45 * 60_000, from: "control plane" },
  ...over,
});
const ALL = { deployed: true, soak: "30m", checks: { min_pass_ratio: 0.9, max_latency_p95_ms: 2000 } };
const failing = (f: SourceFacts, gates: Parameters<typeof evaluateGates>[0] = ALL) =>
  evaluateGates(gates, f)
    .filter((g) => !g.ok)
    .map((g) => `${g.gate}: ${g.detail}`);

describe("promotion gates", () => {
  it("all hold on a DEPLOYED, active, in-sync, soaked and checked revision", () => {
    expect(failing(facts())).toEqual([]);
    expect(evaluateGates(ALL, facts()).map((g) => g.detail)).toEqual([
      "revision rev-2 is DEPLOYED, active and in sync with git",
      `deployed 45m ago (at ${DEPLOYED_AT}, control plane); 30m needed`,
      `10/10 passed (ratio 1), p95 900 ms, at ${DEPLOYED_AT}`,
    ]);
  });

  it("deployed fails on a revision not DEPLOYED, not active, an intent in flight, drift or a change in git", () => {
    expect(failing(facts({ revision: { ...revision, status: "BUILDING" } }))[0]).toBe(
      "deployed: revision rev-2 is BUILDING, not DEPLOYED",
    );
    expect(failing(facts({ deployment: { ...deployment, active_revision_id: "rev-1" } }))).toEqual([
      "deployed: revision rev-2 is not the active one (active: rev-1)",
    ]);
    expect(failing(facts({ pending: true }))[0]).toContain("an apply is in flight");
    // An interrupted apply's intent stays until an apply finishes it: the detail says so.
    expect(failing(facts({ pending: true }))[0]).toContain("apply the source environment again");
    const change = (origin: "drift" | "change" | "conflict" | undefined) => ({
      action: "update" as const,
      revision_fields: ["source_revision_config.repo_ref"],
      in_place_fields: [],
      fields: [
        {
          field: "source_revision_config.repo_ref",
          class: "revision" as const,
          old: 1,
          new: 2,
          ...(origin ? { origin } : {}),
        },
      ],
    });
    expect(failing(facts({ change: change("drift") }))).toEqual([
      "deployed: drift in source_revision_config.repo_ref",
    ]);
    expect(failing(facts({ change: change("change") }))).toEqual([
      "deployed: a change in git not applied yet: source_revision_config.repo_ref",
    ]);
    expect(failing(facts({ change: change("conflict") }))[0]).toBe(
      "deployed: drift in source_revision_config.repo_ref; a change in git not applied yet: source_revision_config.repo_ref",
    );
    expect(failing(facts({ change: change(undefined) }))).toEqual([
      "deployed: live differs from git (update: source_revision_config.repo_ref)",
    ]);
  });

  it("soak is measured on the control plane's clock, to the millisecond", () => {
    const at = (ms: number) => facts({ now: { ms: Date.parse(DEPLOYED_AT) + ms, from: "control plane" } });
    expect(failing(at(30 * 60_000))).toEqual([]);
    expect(failing(at(30 * 60_000 - 1))).toEqual([
      `soak: deployed 29m 59s ago (at ${DEPLOYED_AT}, control plane); 30m needed`,
    ]);
    expect(
      failing(facts({ revision: { ...revision, status: "DEPLOYING" } }), { deployed: false, soak: "1s" }),
    ).toEqual(["soak: no DEPLOYED revision to soak (1s needed)"]);
    // An updated_at that is not a time said "deployed NaNs ago".
    expect(failing(facts({ revision: { ...revision, updated_at: "soon" } }), { soak: "0s" })).toEqual([
      'soak: its updated_at "soon" is not a time; 0s needed',
    ]);
    // The local clock (no Date header) is read to the millisecond, and a second behind is tolerated alike.
    const local = (ms: number) => facts({ now: { ms: Date.parse(DEPLOYED_AT) + ms, from: "local clock" } });
    expect(failing(local(-999), { soak: "0s" })).toEqual([]);
    expect(failing(local(-1000), { soak: "0s" })).toEqual([
      `soak: its updated_at ${DEPLOYED_AT} is 1s ahead of the local clock's time (2026-11-25T09:59:59.000Z): the clocks disagree, so how long it has soaked is unknown; 0s needed`,
    ]);
  });

  it("checks must be of this very revision and meet both thresholds (min_pass_ratio defaults to 1)", () => {
    expect(failing(facts({ checks: null }))).toEqual(["checks: no checks recorded for revision rev-2"]);
    expect(failing(facts({ checks: { ...checks, revision_id: "rev-1" } }))).toEqual([
      "checks: no checks recorded for revision rev-2 (the last ran on rev-1)",
    ]);
    const worse = { ...checks, passed: 8, pass_ratio: 0.8, latency_ms: { p50: 1, p95: 2001, max: 3000 } };
    expect(failing(facts({ checks: worse }))).toEqual([
      `checks: pass ratio 0.8 < 0.9; p95 2001 ms > 2000 ms: 8/10 passed (ratio 0.8), p95 2001 ms, at ${DEPLOYED_AT}`,
    ]);
    const nine = { ...checks, passed: 9, pass_ratio: 0.9 };
    expect(failing(facts({ checks: nine }), { checks: {} })).toEqual([
      `checks: pass ratio 0.9 < 1: 9/10 passed (ratio 0.9), p95 900 ms, at ${DEPLOYED_AT}`,
    ]);
    expect(
      failing(facts({ checks: { ...checks, runs: 0, passed: 0, pass_ratio: 0 } }), {
        deployed: false,
        checks: { min_pass_ratio: 0 },
      })[0],
    ).toContain("no run");
  });

  it("checks refuses a record whose values are impossible or contradict each other, saying what is wrong", () => {
    const gates = { deployed: false, checks: { min_pass_ratio: 0.9, max_latency_p95_ms: 2000 } };
    const detail = (over: Record<string, unknown>) => {
      const failed = failing(facts({ checks: { ...checks, ...over } }), gates);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toContain("checks: the checks record of revision rev-2 is not consistent");
      return failed[0];
    };
    // A ratio of 1 for 3 of 10 passed is not promoted on the ratio's word.
    expect(detail({ passed: 3, pass_ratio: 1 })).toContain("pass_ratio 1 is not 3/10 passed (0.3)");
    expect(detail({ passed: 12, pass_ratio: 1 })).toContain("passed 12 is more than runs 10");
    expect(detail({ pass_ratio: 1.5 })).toContain("pass_ratio is 1.5, not a number from 0 to 1");
    expect(detail({ pass_ratio: -0.1, passed: 0 })).toContain("pass_ratio is -0.1");
    expect(detail({ runs: 0, passed: 0, pass_ratio: 1 })).toContain("pass_ratio 1 is not 0/0 passed (0)");
    expect(detail({ pass_ratio: "1" })).toContain('pass_ratio is "1", not a number from 0 to 1');
    expect(detail({ runs: "10" })).toContain('runs is "10", not a whole number');
    expect(detail({ passed: 9.5, pass_ratio: 0.95 })).toContain("passed is 9.5, not a whole number");
    expect(detail({ pass_ratio: Number.NaN })).toContain("pass_ratio is NaN");
    expect(detail({ latency_ms: { p50: 1, p95: null, max: 1 } })).toContain("latency_ms.p95 is null");
    expect(detail({ latency_ms: { p50: 10, p95: 5, max: 20 } })).toContain("not p50 <= p95 <= max");
    // passed raised to runs over a record that still says why runs failed.
    const failures = [{ case: "refund", reason: "timed out after 30s (2 of 10 runs)" }];
    expect(detail({ failures })).toContain("1 failure is listed, and every run passed");
    expect(detail({ passed: 9, pass_ratio: 0.9, failures: [...failures, ...failures] })).toContain(
      "2 failures are listed, and only 1 run failed",
    );
    expect(detail({ passed: 9, pass_ratio: 0.9, failures: "none" })).toContain(
      'failures is "none", not a list',
    );
    // The exact quotient apply writes is consistent: 2 of 3 holds as 0.666….
    const one = [{ case: "refund", reason: "wrong answer" }];
    expect(
      failing(facts({ checks: { ...checks, runs: 3, passed: 2, pass_ratio: 2 / 3, failures: one } }), {
        checks: { min_pass_ratio: 0.5 },
      }),
    ).toEqual([]);
  });

  it("deployed fails when the status record was ignored: an intent in flight could be in it", () => {
    const ignored = facts({ checks: null, recordProblem: "not JSON" });
    expect(failing(ignored, { deployed: true })).toEqual([
      "deployed: its status record was ignored (not JSON): whether an apply is in flight is unknown; correct the record or apply the source environment again",
    ]);
  });

  it("checks says the record was ignored when it could not be read, not that none was recorded", () => {
    const failed = failing(
      facts({ checks: null, recordProblem: "not a status record: /checks/runs must be integer" }),
      { deployed: false, checks: {} },
    );
    expect(failed).toEqual([
      "checks: no checks read for revision rev-2: its status record was ignored (not a status record: /checks/runs must be integer); run the checks again (apply the source environment) or correct the record",
    ]);
  });

  it("deployed is on unless turned off; soak and checks only when named", () => {
    expect(evaluateGates(undefined, facts()).map((g) => g.gate)).toEqual(["deployed"]);
    expect(evaluateGates({ deployed: false }, facts())).toEqual([]);
  });

  it("durations", () => {
    expect([soakMs("500ms"), soakMs("90s"), soakMs("30m"), soakMs("2h")]).toEqual([
      500, 90_000, 1_800_000, 7_200_000,
    ]);
    expect([formatDuration(0), formatDuration(59_999), formatDuration(3_723_000)]).toEqual([
      "0s",
      "59s",
      "1h 2m 3s",
    ]);
  });
  it("checks fail when they did not verify what is applied now (a change in place since, or an older record)", () => {
    const applied = "a".repeat(64);
    const stamped = { ...checks, applied_digest: applied };
    expect(failing(facts({ checks: stamped, applied }))).toEqual([]);
    const since = failing(facts({ checks: stamped, applied: "b".repeat(64) }));
    expect(since).toEqual([
      `checks: the checks of revision rev-2 (at ${DEPLOYED_AT}) verified another applied state than the one recorded now: a change was applied in place since (the same revision) and not verified; run the checks again: plumb apply the source environment, waiting (without --no-wait)`,
    ]);
    expect(failing(facts({ applied }))[0]).toContain(
      "checks: the checks of revision rev-2 do not say which applied change they verified (recorded by an older plumb, or by hand)",
    );
  });
});
