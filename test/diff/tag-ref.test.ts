import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { desiredDeployment, liveDeployment } from "./helpers.js";

// Spec rule 3 across manifest and live: a tag repo_ref with build_on_push true is refused by the
// server (400) even when the manifest sets only one of the two fields; plan refuses it first.

const INTEGRATION = "20000000-0000-4000-8000-000000000001";
const live = (ref: string, buildOnPush: boolean) =>
  liveDeployment({
    name: "api",
    source: "gitrepo",
    source_config: {
      integration_id: INTEGRATION,
      repo_url: "https://github.com/acme/api",
      build_on_push: buildOnPush,
    },
    source_revision_config: { repo_ref: ref, graph_config_path: "langgraph.json" },
  });
const plan = (spec: Omit<DeploymentSpec, "source">, deployment: ReturnType<typeof live>) => {
  const desired = desiredDeployment("api", { source: "gitrepo", ...spec });
  return buildPlan({ desired: [desired], live: { deployments: [deployment] } }).changes[0]!;
};

describe("buildPlan: tag repo_ref and build_on_push (rule 3)", () => {
  it("refuses a tag repo_ref while build_on_push is true live and unset in the manifest", () => {
    const change = plan({ source_revision_config: { repo_ref: "refs/tags/v2" } }, live("main", true));
    expect(change.action).toBe("refused");
    expect(change.request).toBeNull();
    expect(change.errors).toHaveLength(1);
    expect(change.errors[0]!.field).toBe("source_revision_config.repo_ref");
    // file:line of repo_ref (helpers put a field on line 1 + its depth) and the fix to make.
    expect(change.errors[0]!.message).toContain("deployments/api.yaml:4");
    expect(change.errors[0]!.message).toContain("set source_config.build_on_push: false");
  });

  it("sends the tag when the manifest also sets build_on_push: false", () => {
    const change = plan(
      { source_config: { build_on_push: false }, source_revision_config: { repo_ref: "refs/tags/v2" } },
      live("main", true),
    );
    expect(change.action).toBe("update");
    expect(change.request?.body).toEqual({
      source_config: { build_on_push: false },
      source_revision_config: { repo_ref: "refs/tags/v2" },
    });
  });

  it("refuses build_on_push: true while the live repo_ref is a tag and unset in the manifest", () => {
    const change = plan({ source_config: { build_on_push: true } }, live("refs/tags/v1", false));
    expect(change.action).toBe("refused");
    expect(change.errors.map((e) => e.field)).toEqual(["source_config.build_on_push"]);
    expect(change.errors[0]!.message).toContain('live repo_ref "refs/tags/v1" is a tag');
    expect(change.errors[0]!.message).toContain("deployments/api.yaml:4");
    expect(change.errors[0]!.message).toContain("set source_revision_config.repo_ref to a branch");
  });

  it("allows build_on_push: true together with a branch, and leaves unrelated changes alone", () => {
    const toBranch = plan(
      { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "main" } },
      live("refs/tags/v1", false),
    );
    expect(toBranch.action).toBe("update");
    const other = plan(
      { source_revision_config: { graph_config_path: "other.json" } },
      live("refs/tags/v1", false),
    );
    expect(other.action).toBe("update");
    expect(
      plan({ source_revision_config: { repo_ref: "refs/tags/v1" } }, live("refs/tags/v1", false)).action,
    ).toBe("noop");
  });
});
