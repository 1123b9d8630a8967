import { describe, expect, it } from "vitest";
import { planExitCode } from "../../src/cli/sync/plan.js";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import { formatPlanJson } from "../../src/report/format-json.js";
import { formatPlanMarkdown } from "../../src/report/markdown/format-markdown.js";
import { formatPlanText } from "../../src/report/format-text.js";
import { desiredDeployment, liveDeployment } from "./helpers.js";

// A change that cannot be planned because of an error (a secret's environment variable is not set)
// is not an immutable-field refusal: text and Markdown say "not planned (errors)".
const missingEnv = "secrets: environment variable TOKEN_VALUE is not set (spec.secrets[0].value_from.env)";

const plan = buildPlan({
  desired: [
    {
      ...desiredDeployment("web", {
        source: "internal_container",
        source_revision_config: { image_uri: "img:1" },
      }),
      errors: [{ field: "secrets", message: missingEnv }],
    },
    desiredDeployment("db", { source: "gitrepo" }),
  ],
  live: { deployments: [liveDeployment({ name: "db", source: "external_container" })] },
});

describe("changes not planned because of an error", () => {
  it("text: counted and marked apart from refused changes, with the message", () => {
    const text = formatPlanText(plan);
    expect(text).toContain("Plan: 0 to create, 0 to update, 1 refused, 1 not planned (errors), 0 unchanged.");
    expect(text).toMatch(/! not planned \(error\) Deployment web/);
    expect(text).toContain(`error: ${missingEnv}`);
    expect(text).toMatch(/! refused Deployment db/);
  });

  it("Markdown: its own column and label", () => {
    const md = formatPlanMarkdown(plan);
    expect(md).toContain("| Create | Update | Refused | Not planned (errors) | Unchanged |");
    expect(md).toContain("| 0 | 0 | 1 | 1 | 0 |");
    expect(md).toContain("! not planned (error): Deployment <code>web</code>");
  });

  it("JSON keeps the format_version 1 contract: action refused, errors, plus not_planned: true", () => {
    const json = JSON.parse(formatPlanJson(plan));
    expect(json.summary).toEqual({ create: 0, update: 0, noop: 0, refused: 2 });
    const web = json.changes.find((c: { name: string }) => c.name === "web");
    expect(web).toMatchObject({ action: "refused", not_planned: true, request: null });
    expect(web.errors).toEqual([{ field: "secrets", message: missingEnv }]);
    expect(json.changes.find((c: { name: string }) => c.name === "db").not_planned).toBeUndefined();
    expect(planExitCode(plan, false)).toBe(1);
  });
});
