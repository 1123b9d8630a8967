import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import { formatPlanMarkdown, MARKDOWN_LIMIT } from "../../src/report/markdown/format-markdown.js";
import { formatPlanText } from "../../src/report/format-text.js";
import { desiredDeployment } from "../diff/helpers.js";

const createPlan = (count: number) =>
  buildPlan({
    desired: Array.from({ length: count }, (_, i) =>
      desiredDeployment(`agent-${i}`, {
        source: "internal_container",
        source_revision_config: { image_uri: `registry.example/agent-${i}:${"1".repeat(40)}` },
        secrets: [{ name: "TOKEN", value: `SECRET-${i}` }],
      }),
    ),
    live: { deployments: [] },
  });

describe("formatters", () => {
  it("colour only when asked, and never a secret value", () => {
    const plan = createPlan(1);
    expect(formatPlanText(plan)).not.toContain("\u001b[");
    expect(formatPlanText(plan, { color: true })).toContain("\u001b[");
    expect(formatPlanText(plan, { color: true })).not.toContain("SECRET-0");
    expect(formatPlanMarkdown(plan)).not.toContain("SECRET-0");
  });

  it("keeps Markdown under the comment limit, truncated with a note", () => {
    const plan = createPlan(600);
    const md = formatPlanMarkdown(plan);
    expect(md.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(md).toMatch(/\*\*Truncated:\*\* \d+ more changes? not shown/);
    expect(md.indexOf("| Create |")).toBeLessThan(md.indexOf("<details>"));
    const small = formatPlanMarkdown(createPlan(3));
    expect(small).not.toContain("Truncated");
    expect(small.match(/<details>/g)).toHaveLength(3);
  });

  it("truncates to the counts when even the table would not fit", () => {
    const md = formatPlanMarkdown(createPlan(50), 2_000);
    expect(md.length).toBeLessThanOrEqual(2_000);
    expect(md).toContain("| 50 | 0 | 0 | 0 |");
    expect(md).toContain("50 more changes not shown");
  });
});
