import { describe, expect, it } from "vitest";
import { buildObjectRow } from "../../src/status-page/page-model.js";
import {
  buildEnvironmentMatrix,
  type MatrixEnvironment,
  promotionOrder,
  versionOf,
} from "../../src/status-page/matrix-model.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { status } from "../controller/fixtures.js";
import { formatStatusText } from "../../src/report/format-status.js";
import { withPlannedChecks } from "../../src/apply/verify/verify-plan.js";
import { changeLines } from "../../src/report/format-lines.js";
import type { Manifest } from "../../src/schema/manifest.js";

const gitrepo = (name: string, ref: string, extra: Partial<ObjectStatus> = {}) =>
  status(name, { applied_spec: { source: "gitrepo", source_revision_config: { repo_ref: ref } }, ...extra });
const image = (name: string, uri: string) =>
  status(name, {
    applied_spec: { source: "internal_container", source_revision_config: { image_uri: uri } },
  });

const checks = (revision: string) => ({
  revision_id: revision,
  at: "2026-11-25T19:00:00.000Z",
  runs: 4,
  passed: 3,
  pass_ratio: 0.75,
  latency_ms: { p50: 100, p95: 400, max: 400 },
});

describe("promotionOrder", () => {
  it("puts each environment right after the one it is promoted from; the rest by name", () => {
    expect(
      promotionOrder([
        { name: "prod", promotion_from: "staging" },
        { name: "onprem", promotion_from: "staging" },
        { name: "staging", promotion_from: "dev" },
        { name: "dev" },
        { name: "alpha" },
      ]),
    ).toEqual(["alpha", "dev", "staging", "onprem", "prod"]);
  });

  it("orders by name without promotion, and survives a cycle or an unknown source", () => {
    expect(promotionOrder([{ name: "b" }, { name: "c" }, { name: "a" }])).toEqual(["a", "b", "c"]);
    expect(
      promotionOrder([
        { name: "y", promotion_from: "x" },
        { name: "x", promotion_from: "y" },
        { name: "z", promotion_from: "nowhere" },
      ]),
    ).toEqual(["z", "x", "y"]);
  });
});

describe("versionOf", () => {
  it("is repo_ref, image_uri or the uploaded digest", () => {
    expect(versionOf(gitrepo("a", "v1.4.2"))).toBe("v1.4.2");
    expect(versionOf(image("a", "registry/a:2"))).toBe("registry/a:2");
    expect(versionOf(status("a", { source_upload: { digest: "sha256:ab", object_path: "p" } }))).toBe(
      "sha256:ab",
    );
    expect(versionOf(status("a"))).toBeNull();
  });
});

describe("buildEnvironmentMatrix", () => {
  const environments: MatrixEnvironment[] = [
    {
      name: "prod",
      promotion_from: "staging",
      records: [gitrepo("support-agent", "v1.4.1"), image("billing", "reg/billing:7")],
    },
    {
      name: "staging",
      name_suffix: "-staging",
      records: [
        gitrepo("support-agent-staging", "v1.4.2", { checks: checks("rev-support-agent-staging") }),
        image("billing-staging", "reg/billing:7"),
        gitrepo("experiment-staging", "main"),
        { ...status("acme"), kind: "OrganizationAccess" },
      ],
    },
  ];

  it("has a row per deployment (suffixes taken off), environments in promotion order", () => {
    const matrix = buildEnvironmentMatrix(environments);
    expect(matrix.environments).toEqual(["staging", "prod"]);
    expect(matrix.upstream).toEqual([null, "staging"]);
    expect(matrix.rows.map((r) => r.deployment)).toEqual(["billing", "experiment", "support-agent"]);
    const support = matrix.rows[2]!;
    expect(support.cells[0]).toEqual({
      name: "support-agent-staging",
      revision_id: "rev-support-agent-staging",
      revision_status: "DEPLOYED",
      version: "v1.4.2",
      sync: "Synced",
      health: "Healthy",
      checks: { passed: 3, runs: 4, pass_ratio: 0.75, p95_ms: 400 },
      checks_invalid: null,
      lags_behind: null,
    });
    expect(support.cells[1]).toMatchObject({ name: "support-agent", version: "v1.4.1", checks: null });
  });

  it("marks where an environment runs another version than the one it is promoted from", () => {
    const matrix = buildEnvironmentMatrix(environments);
    const [billing, experiment, support] = matrix.rows;
    expect(support!.cells[1]!.lags_behind).toBe("staging");
    expect(support!.lagging).toBe(true);
    expect(billing!.cells[1]!.lags_behind).toBeNull(); // same image in both
    expect(billing!.lagging).toBe(false);
    expect(experiment!.cells).toEqual([expect.objectContaining({ version: "main" }), null]); // not in prod
    expect(experiment!.lagging).toBe(false);
    expect(matrix.lagging).toBe(1);
  });

  it("without any promotion, compares each environment with the one before it by name", () => {
    const matrix = buildEnvironmentMatrix([
      { name: "b-prod", records: [gitrepo("a", "v1")] },
      { name: "a-dev", records: [gitrepo("a", "v2")] },
      { name: "c-dr", records: [gitrepo("a", "v1")] },
    ]);
    expect(matrix.upstream).toEqual([null, "a-dev", "b-prod"]);
    expect(matrix.rows[0]!.cells.map((c) => c?.lags_behind)).toEqual([null, "a-dev", null]);
  });

  it("shows checks only when they are of the active revision", () => {
    const old = gitrepo("a", "v1", { checks: checks("rev-older") });
    const matrix = buildEnvironmentMatrix([{ name: "dev", records: [old] }]);
    expect(matrix.rows[0]!.cells[0]!.checks).toBeNull();
  });
});

describe("the object row", () => {
  it("carries the record's checks for the detail view", () => {
    expect(
      buildObjectRow({
        kind: "Deployment",
        name: "a",
        status: status("a", { checks: checks("r") }),
        manifest: undefined,
        activity: undefined,
      }).checks,
    ).toEqual(checks("r"));
    expect(
      buildObjectRow({
        kind: "Deployment",
        name: "a",
        status: undefined,
        manifest: undefined,
        activity: undefined,
      }).checks,
    ).toBeNull();
  });
});

describe("a checks record that contradicts itself (docs/environments.md, Checks)", () => {
  // pass_ratio 1 with 3 of 10 passed: the record was edited; none of its figures is shown.
  const edited = { ...checks("rev-a"), runs: 10, passed: 3, pass_ratio: 1 };
  const problem = "pass_ratio 1 is not 3/10 passed (0.3)";
  const record = gitrepo("a", "v1", { active_revision_id: "rev-a", checks: edited });

  it("is shown in the matrix as invalid, with its first problem, never its figures", () => {
    const cell = buildEnvironmentMatrix([{ name: "dev", records: [record] }]).rows[0]!.cells[0]!;
    expect(cell.checks).toBeNull();
    expect(cell.checks_invalid).toBe(problem);
    const valid = gitrepo("a", "v1", { active_revision_id: "rev-a", checks: checks("rev-a") });
    expect(
      buildEnvironmentMatrix([{ name: "dev", records: [valid] }]).rows[0]!.cells[0]!.checks_invalid,
    ).toBeNull();
  });

  it("is shown in the object's detail and in plumb status as invalid, escaped", () => {
    const row = buildObjectRow({
      kind: "Deployment",
      name: "a",
      status: record,
      manifest: undefined,
      activity: undefined,
    });
    expect(row).toMatchObject({ checks: null, checks_invalid: problem });
    expect(formatStatusText([record])).toContain(`record invalid: ${problem}`);
    expect(formatStatusText([record])).not.toContain("3/10 p95");
    const control = gitrepo("a", "v1", {
      active_revision_id: "rev-a",
      checks: { ...edited, runs: "\u001b[2J" as never },
    });
    const text = formatStatusText([control]);
    expect(text).toContain('record invalid: runs is "\\u001b[2J", not a whole number');
    expect(text).not.toContain("\u001b");
  });

  it("is said as invalid in a plan's last checks", () => {
    const manifest = {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "a" },
      spec: { source: "gitrepo", verify: { input: "hi" } },
    } as unknown as Manifest;
    const plan = withPlannedChecks(
      {
        changes: [{ kind: "Deployment", name: "a", action: "update", diff: [], errors: [], warnings: [] }],
      } as never,
      new Map([["Deployment/a", manifest]]),
      new Map([["Deployment/a", record]]),
    );
    const change = plan.changes[0]!;
    expect(change.checks).toMatchObject({ last: null, last_invalid: problem });
    const text = changeLines(change)
      .map((l) => l.text)
      .join("\n");
    expect(text).toContain(`last: checks record invalid: ${problem}`);
  });
});
