import { describe, expect, it } from "vitest";
import type { ApplyReport, ApplyResult } from "../../src/apply/apply-types.js";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import {
  APPLY_COMMENT_MARKER,
  formatApplyMarkdown,
} from "../../src/report/markdown/format-apply-markdown.js";
import { formatPlanMarkdown, PLAN_COMMENT_MARKER } from "../../src/report/markdown/format-markdown.js";
import type { ReportContext } from "../../src/report/report-context.js";
import { desiredDeployment } from "../diff/helpers.js";

const plan = (count: number) =>
  buildPlan({
    desired: Array.from({ length: count }, (_, i) =>
      desiredDeployment(`agent-${i}`, {
        source: "internal_container",
        source_revision_config: { image_uri: `registry.example/agent-${i}:2` },
        secrets: [{ name: "TOKEN", value: `SECRET-VALUE-${i}` }],
      }),
    ),
    live: { deployments: [] },
  });

const result = (name: string, over: Partial<ApplyResult> = {}): ApplyResult => ({
  kind: "Deployment",
  name,
  action: "create",
  id: `id-${name}`,
  outcome: "converged",
  revision_id: `rev-${name}`,
  revision_status: "DEPLOYED",
  message: null,
  superseded_by: null,
  verify: null,
  sync: "Synced",
  health: "Healthy",
  elapsed_ms: 2_100,
  ...over,
});

const report = (results: ApplyResult[]): ApplyReport => {
  const summary = { converged: 0, accepted: 0, skipped: 0, failed: 0, timeout: 0, interrupted: 0 };
  for (const r of results) summary[r.outcome]++;
  return { format_version: "2", ok: results.every((r) => r.outcome === "converged"), summary, results };
};

const context: ReportContext = {
  commit: "0123456789abcdef0123",
  controlPlane: "https://cp.example.com",
  tenant: "tenant-7",
  repositoryPath: (file) => `repo/${file}`,
};

describe("apply as a pull-request comment", () => {
  it("says whether it converged, with counts, one row per object, the commit, control plane and tenant", () => {
    const md = formatApplyMarkdown(
      report([
        result("agent-0", {
          verify: { ok: true, first_token_ms: 120, answer: "pong" } as ApplyResult["verify"],
        }),
        result("agent-1"),
      ]),
      plan(2),
      { elapsedMs: 4_200, context },
    );
    expect(md.split("\n")[0]).toBe(APPLY_COMMENT_MARKER);
    expect(md).toContain("### plumb apply: ✅ converged");
    expect(md).toContain(
      "Commit `0123456789ab` · control plane `https://cp.example.com` · tenant `tenant-7`",
    );
    expect(md).toContain("2 objects in 4.2 s.");
    expect(md).toContain("| ✅ converged |\n|---:|\n| 2 |");
    expect(md).toContain(
      "| ✅ converged | Deployment | `agent-0` | `repo/deployments/agent-0.yaml:1` | `rev-agent-0` DEPLOYED | passed (120 ms) | 2.1 s |",
    );
    expect(md).toContain('verify answered: "pong"');
    expect(md).toContain("secrets: TOKEN (sensitive)");
    expect(md).not.toContain("SECRET-VALUE");
  });

  it("puts failures first with their reason", () => {
    const md = formatApplyMarkdown(
      report([
        result("agent-0"),
        result("agent-1", {
          outcome: "failed",
          revision_status: "DEPLOY_FAILED",
          message: "image pull backoff",
        }),
      ]),
      plan(2),
      { elapsedMs: 1_000 },
    );
    expect(md).toContain("### plumb apply: ❌ did not converge");
    expect(md.indexOf("❌ failed: Deployment <code>agent-1</code>")).toBeLessThan(
      md.indexOf("✅ converged: Deployment <code>agent-0</code>"),
    );
    expect(md).toContain("! failed: image pull backoff");
  });

  it("says when there was nothing to apply, and lists prunes", () => {
    const md = formatApplyMarkdown(report([]), plan(0), {
      elapsedMs: 10,
      pruned: [{ name: "old", id: "id-old", outcome: "deleted", message: "deleted" }],
    });
    expect(md).toContain("Nothing to apply");
    expect(md).toContain("🗑️ deleted Deployment `old`");
  });

  it("stays under the comment limit, truncated with a note", () => {
    const results = Array.from({ length: 600 }, (_, i) => result(`agent-${i}`));
    const md = formatApplyMarkdown(report(results), plan(600), { elapsedMs: 1, limit: 20_000 });
    expect(md.length).toBeLessThanOrEqual(20_000);
    expect(md).toMatch(/\*\*Truncated:\*\* \d+ more objects? not detailed/);
  });
});

describe("plan comment facts", () => {
  it("starts with the marker CI scripts find it by, and names repository paths, commit, control plane", () => {
    const md = formatPlanMarkdown(plan(1), undefined, context);
    expect(md.split("\n")[0]).toBe(PLAN_COMMENT_MARKER);
    expect(md).toContain(
      "Commit `0123456789ab` · control plane `https://cp.example.com` · tenant `tenant-7`",
    );
    expect(md).toContain("`repo/deployments/agent-0.yaml:1`");
  });
});
