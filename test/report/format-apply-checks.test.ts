import { describe, expect, it } from "vitest";
import type { ApplyReport, ApplyResult, VerifyResult } from "../../src/apply/apply-types.js";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import { formatApplyMarkdown } from "../../src/report/markdown/format-apply-markdown.js";
import { formatApplyJson, formatApplySummary, plainProgress } from "../../src/report/format-apply.js";
import { formatStatusText } from "../../src/report/format-status.js";
import { sampleStatus } from "../reconcile/fixtures.js";

// The agent's checks in apply's output: the text line, the Markdown row and section, and JSON.

const failedVerify: VerifyResult = {
  ok: false,
  thread_id: null,
  run_id: null,
  message: 'pass ratio 0.5 is below min_pass_ratio 1 (…); wrong: the answer does not contain "refund"',
  code: "verify-failed",
  checks: {
    revision_id: "rev-1",
    at: "2026-11-25T19:00:00.000Z",
    runs: 4,
    passed: 2,
    pass_ratio: 0.5,
    latency_ms: { p50: 120, p95: 410, max: 410 },
    first_token_ms: { p50: 60, p95: 90 },
    failures: [{ case: "wrong", reason: 'the answer does not contain "refund" (2 of 2 runs)' }],
  },
  runs: [{ case: "wrong", ok: false, reason: "x", total_ms: 410, first_token_ms: 90 }],
};

const result = (over: Partial<ApplyResult>): ApplyResult => ({
  kind: "Deployment",
  name: "agent",
  action: "update",
  id: "id-agent",
  outcome: "failed",
  revision_id: "rev-1",
  revision_status: "DEPLOYED",
  message: failedVerify.message,
  superseded_by: null,
  verify: failedVerify,
  sync: "Synced",
  health: "Degraded",
  elapsed_ms: 2_100,
  ...over,
});

const report = (r: ApplyResult): ApplyReport => ({
  format_version: "2",
  ok: false,
  summary: { converged: 0, accepted: 0, skipped: 0, failed: 1, timeout: 0, interrupted: 0 },
  results: [r],
});

describe("checks in apply output", () => {
  it("text: the checks instead of one answer, and the code after the message", () => {
    const out: string[] = [];
    plainProgress({ write: (t: string) => out.push(t) })({
      kind: "Deployment",
      name: "agent",
      phase: "done",
      result: result({}),
      elapsed_ms: 2_100,
    });
    expect(out.join("")).toBe(
      "apply: Deployment agent failed revision rev-1 DEPLOYED verify failed (2 of 4 runs passed (0.5), latency p50 120 ms, p95 410 ms, first token p95 90 ms) in 2.1s: " +
        `${failedVerify.message} [verify-failed]\n`,
    );
    expect(formatApplySummary(report(result({})), 2_100)).toContain("[verify-failed]");
  });

  it("text: a single smoke run still shows its first token and answer", () => {
    const single: VerifyResult = {
      ok: true,
      thread_id: "t",
      run_id: "r",
      message: "answered",
      first_token_ms: 12,
      answer: "pong",
      checks: { ...failedVerify.checks!, runs: 1, passed: 1, pass_ratio: 1 },
    };
    const out: string[] = [];
    plainProgress({ write: (t: string) => out.push(t) })({
      kind: "Deployment",
      name: "agent",
      phase: "done",
      result: result({ outcome: "converged", verify: single, message: null, health: "Healthy" }),
      elapsed_ms: 2_100,
    });
    expect(out.join("")).toContain('verify passed (first token 12 ms: "pong")');
  });

  it("Markdown: passed/runs and p95 in the row; checks, failures and the code in the section", () => {
    const plan = buildPlan({ desired: [], live: { deployments: [] } });
    const md = formatApplyMarkdown(report(result({})), plan, { elapsedMs: 2_100 });
    expect(md).toContain("| failed 2/4 (p95 410 ms) |");
    expect(md).toContain("  checks: 2 of 4 runs passed (0.5), latency p50 120 ms, p95 410 ms");
    expect(md).toContain('! check wrong: the answer does not contain "refund" (2 of 2 runs)');
    expect(md).toContain("! [verify-failed]");
  });

  it("JSON: the checks, every run and the code", () => {
    const plan = buildPlan({ desired: [], live: { deployments: [] } });
    const json = JSON.parse(formatApplyJson(report(result({})), plan)) as ApplyReport;
    expect(json.results[0]!.verify).toMatchObject({ code: "verify-failed", checks: { passed: 2, runs: 4 } });
    expect(json.results[0]!.verify!.runs).toHaveLength(1);
  });

  it("plumb status: the active revision's checks in a CHECKS column, - for none or another revision's", () => {
    const checked = sampleStatus("a", {
      active_revision_id: "rev-1",
      latest_revision_id: "rev-1",
      checks: failedVerify.checks!,
    });
    const older = sampleStatus("b", {
      active_revision_id: "rev-2",
      latest_revision_id: "rev-2",
      checks: failedVerify.checks!,
    });
    const lines = formatStatusText([checked, older, sampleStatus("c")]).split("\n");
    expect(lines[0]).toMatch(/ACTIVE → LATEST\s+CHECKS\s+UPDATED/);
    expect(lines[1]).toMatch(/^Deployment\/a .* rev-1\s+2\/4 p95 410ms\s/);
    expect(lines[2]).toMatch(/^Deployment\/b .* rev-2\s+-\s/);
    expect(lines[3]).toMatch(/\s-\s/);
  });
});
