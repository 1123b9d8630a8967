import { describe, expect, it } from "vitest";
import type { ApplyReport, ApplyResult } from "../../src/apply/apply-types.js";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import type { Plan } from "../../src/diff/plan/plan-types.js";
import type { Problem } from "../../src/manifest/types.js";
import type { DriftReport } from "../../src/reconcile/drift.js";
import { formatApplyMarkdown } from "../../src/report/markdown/format-apply-markdown.js";
import { formatDriftMarkdown, formatDriftText } from "../../src/report/format-drift.js";
import { formatPlanMarkdown, MARKDOWN_LIMIT } from "../../src/report/markdown/format-markdown.js";
import { markdownCode, markdownText } from "../../src/report/markdown/markdown-text.js";
import { formatProblemsMarkdown } from "../../src/report/report-invalid.js";
import { desiredDeployment } from "../diff/helpers.js";
import { markupIn } from "./markdown-markup.js";

// Text from a pull request's files and from servers in the Markdown comments plumb writes (plan,
// apply, drift, invalid manifests): a file name, a quoted manifest key, a server's message or a
// recorded name is shown as written, never read as markup: no image, link, HTML, mention,
// reference, extra table cell or bidirectional override; and a comment stays under GitHub's size
// limit however many objects or problems there are.

const HOSTILE =
  "x`|<img src=https://evil.example/p.png>![t](https://evil.example/t.png) @acme/admins #12 <!-- \u202e |`` ` **b** [l](https://evil.example) $\\Huge{ok}$";

const plan = (file: string, pruneName = "old"): Plan => {
  const desired = desiredDeployment("alpha", {
    source: "internal_container",
    source_revision_config: { image_uri: "registry.example/a:1" },
  });
  desired.loaded = { ...desired.loaded, file };
  const built = buildPlan({ desired: [desired], live: { deployments: [] } });
  return {
    ...built,
    prune: [{ kind: "Deployment", name: pruneName, id: `id ${HOSTILE}`, action: "orphan" }],
  };
};

const applyResult = (over: Partial<ApplyResult>): ApplyResult => ({
  kind: "Deployment",
  name: "alpha",
  action: "create",
  id: "id-alpha",
  outcome: "failed",
  revision_id: "rev-1",
  revision_status: "DEPLOY_FAILED",
  message: null,
  superseded_by: null,
  verify: null,
  sync: "Unknown",
  health: "Unknown",
  elapsed_ms: 1_000,
  ...over,
});

const applyReport = (results: ApplyResult[]): ApplyReport => ({
  format_version: "2",
  ok: false,
  summary: { converged: 0, accepted: 0, skipped: 0, failed: results.length, timeout: 0, interrupted: 0 },
  results,
});

const driftReport = (names: string[], file: string, error: string): DriftReport => ({
  format_version: "1",
  in_sync: false,
  drifted: true,
  summary: {
    differs: names.length,
    refused: 0,
    missing: 0,
    vanished: 0,
    "removed-from-git": 0,
    in_sync: 0,
    pending: 0,
  },
  items: names.map((name) => ({
    kind: "Deployment",
    name,
    id: null,
    reason: "differs",
    origin: "drift",
    fields: ["source_revision_config.image_uri"],
    field_origins: { "source_revision_config.image_uri": "drift" },
    file,
    line: 3,
    change: null,
  })),
  not_checked: [{ kind: "Deployment", name: "beta", file, line: 1, errors: [error] }],
});

const problem = (message: string, file = "a.yaml"): Problem => ({
  file,
  line: 7,
  column: 3,
  severity: "error",
  code: "unknown-field",
  field: "",
  message,
});

describe("hostile text in Markdown comments", () => {
  it("plan: a file name and a removed object's name and id stay text", () => {
    const md = formatPlanMarkdown(plan(`deploy/${HOSTILE}.yaml`, HOSTILE));
    expect(markupIn(md)).toEqual([]);
    expect(md).toContain("acme/admins");
    expect(md).toContain("\\u202e");
  });

  it("apply: a file name, a revision id and a prune's message stay text", () => {
    const p = plan(`deploy/${HOSTILE}.yaml`);
    const md = formatApplyMarkdown(
      applyReport([applyResult({ message: HOSTILE, revision_id: HOSTILE })]),
      p,
      { elapsedMs: 1, pruned: [{ name: HOSTILE, id: "id-1", outcome: "failed", message: HOSTILE }] },
    );
    expect(markupIn(md)).toEqual([]);
    expect(md).toContain("acme/admins");
  });

  it("drift: a file name and a server's error stay text", () => {
    const md = formatDriftMarkdown(driftReport([HOSTILE], `deploy/${HOSTILE}.yaml`, HOSTILE));
    expect(markupIn(md)).toEqual([]);
    expect(md).toContain("acme/admins");
  });

  it("invalid manifests: a problem quoting a manifest's key stays text", () => {
    const md = formatProblemsMarkdown([problem(`unknown field "${HOSTILE}"`, `${HOSTILE}.yaml`)], "1 error");
    expect(markupIn(md)).toEqual([]);
    expect(md).toContain("acme/admins");
  });

  it("a code span holds any backtick run, and a mention as code notifies no one", () => {
    expect(markdownCode("a`b")).toBe("``a`b``");
    expect(markdownCode("`a``")).toBe("``` `a`` ```");
    expect(markdownCode("a|b")).toBe("`a\\|b`");
    expect(markdownCode("a|b", false)).toBe("`a|b`");
    expect(markdownText("ping @acme/admins and #12, mail a@b.example")).toBe(
      "ping `@acme/admins` and `#12`, mail a@b.example",
    );
  });
});

describe("the comment's size limit", () => {
  it("invalid manifests: 5,000 problems are cut with a note", () => {
    const problems = Array.from({ length: 5_000 }, (_, i) => problem(`unknown field "f${i}"`, `f${i}.yaml`));
    const md = formatProblemsMarkdown(problems, "5000 errors");
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).toMatch(/\*\*Truncated:\*\* \d+ more problems not shown/);
    expect(md.trimEnd().endsWith("**5000 errors**")).toBe(true);
  });

  it("drift: 5,000 drifted objects are cut with a note", () => {
    const names = Array.from({ length: 5_000 }, (_, i) => `agent-${i}`);
    const md = formatDriftMarkdown(driftReport(names, "deploy/a.yaml", "boom"));
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).toMatch(/Truncated: \d+ more objects not shown/);
  });

  it("plan: a 70 KB value is cut, and the changes after it are still shown", () => {
    const desired = ["a", "b", "c", "d"].map((name) =>
      desiredDeployment(name, {
        source: "internal_container",
        source_revision_config: {
          image_uri: `registry.example/${name}:${name === "a" ? "x".repeat(70_000) : "1"}`,
        },
      }),
    );
    const md = formatPlanMarkdown(buildPlan({ desired, live: { deployments: [] } }));
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md.match(/<details>/g)).toHaveLength(4);
    expect(md).toMatch(/… \(\d+ more characters not shown\)/);
    expect(md).not.toContain("Truncated");
  });

  it("drift: a 100 KB server error is cut in its row, and the row is still shown", () => {
    const md = formatDriftMarkdown(driftReport(["alpha"], "deploy/a.yaml", `bad: ${"x".repeat(100_000)}`));
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).toMatch(/\| Deployment `beta` \| not checked: bad: x+… \(\d+ more characters not shown\)/);
    expect(md).toContain("| Deployment `alpha` |");
    expect(md).not.toContain("Truncated");
  });

  it("plan and apply: 5,000 removed objects are cut with a note", () => {
    const p = plan("deploy/a.yaml");
    p.prune = Array.from({ length: 5_000 }, (_, i) => ({
      kind: "Deployment" as const,
      name: `agent-${i}`,
      id: `id-${i}`,
      action: "delete" as const,
    }));
    const md = formatPlanMarkdown(p);
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).toMatch(/and \d+ more objects removed from git/);
    const pruned = p.prune.map((x) => ({
      name: x.name,
      id: x.id,
      outcome: "deleted" as const,
      message: "deleted",
    }));
    const applied = formatApplyMarkdown(applyReport([applyResult({})]), p, { elapsedMs: 1, pruned });
    expect(applied.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(applied).toMatch(/and \d+ more deletions/);
  });
});

describe("drift's text", () => {
  it("prints a recorded name (a status branch's) with its control characters escaped", () => {
    const report = driftReport(["ghost\u001b[2J\n::warning::x"], "deploy/a.yaml", "boom");
    const text = formatDriftText(report);
    expect(text).toContain("ghost\\u001b[2J\\n::warning::x");
    expect(text).not.toContain("\u001b");
    expect(text).not.toMatch(/^::warning::/m);
  });
});
