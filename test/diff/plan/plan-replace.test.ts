import { describe, expect, it } from "vitest";
import { type BuildPlanInput, buildPlan } from "../../../src/diff/plan/build-plan.js";
import { planReplacements } from "../../../src/diff/plan/plan-replace.js";
import { desiredDeployment, liveDeployment, loadedAccess } from "../helpers.js";

// planReplacements: a change refused only for immutable fields becomes the create plumb would plan
// without the live deployment, marked `replaces`, when the user allows replacing it.

const LISTENER = "22222222-2222-4222-8222-222222222222";
const container = (image: string, namespace = "agents") => ({
  source: "external_container" as const,
  source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: namespace } },
  source_revision_config: { image_uri: image },
});

/** web: its namespace moved (immutable); api: only its image changed; both live. */
function input(): BuildPlanInput {
  return {
    desired: [
      desiredDeployment("web", container("img:1", "other")),
      desiredDeployment("api", container("img:2")),
    ],
    live: {
      deployments: [
        liveDeployment({ name: "web", ...container("img:1") }),
        liveDeployment({ name: "api", ...container("img:1") }),
      ],
    },
  };
}

describe("planReplacements", () => {
  it("turns an allowed immutable refusal into a create that replaces the live id, with a warning", () => {
    const i = input();
    const plan = buildPlan(i);
    expect(plan.summary).toMatchObject({ refused: 1, update: 1, create: 0 });
    const replaced = planReplacements(plan, i, (name) => name === "web");
    const [web, api] = replaced.changes;
    expect(web).toMatchObject({
      action: "create",
      name: "web",
      replaces: { id: i.live.deployments[0]!.id, fields: ["source_config.listener_config.k8s_namespace"] },
      request: { method: "POST", path: "/v2/deployments" },
    });
    expect(web?.warnings).toContainEqual({
      field: "source_config.listener_config.k8s_namespace",
      message: expect.stringContaining("deleted, then created again under the same name"),
    });
    expect(api).toBe(plan.changes[1]);
    expect(replaced.summary).toEqual({ ...plan.summary, refused: 0, create: 1, replace: 1 });
  });

  it("leaves the plan as it is when no refusal is allowed to be replaced", () => {
    const i = input();
    const plan = buildPlan(i);
    expect(planReplacements(plan, i, () => false)).toBe(plan);
  });

  it("replaces nothing but immutable refusals of existing deployments", () => {
    // A refusal with no immutable field (a tag with build_on_push) stays refused.
    const sourceConfig = {
      integration_id: "33333333-3333-4333-8333-333333333333",
      repo_url: "https://github.com/acme/tagged",
      deployment_type: "dev" as const,
      build_on_push: true,
    };
    const i: BuildPlanInput = {
      desired: [
        desiredDeployment("tagged", {
          source: "gitrepo",
          source_config: sourceConfig,
          source_revision_config: { repo_ref: "refs/tags/v1", graph_config_path: "langgraph.json" },
        }),
        { loaded: loadedAccess({ invites_enabled: true }) },
      ],
      live: {
        deployments: [
          liveDeployment({
            name: "tagged",
            source: "gitrepo",
            source_config: sourceConfig,
            source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
          }),
        ],
        organization: {
          id: "o",
          display_name: "org",
          jit_provisioning_enabled: false,
          invites_enabled: false,
          sso_login_slug: "org",
        },
      },
    };
    const plan = buildPlan(i);
    expect(plan.changes[0]?.action).toBe("refused");
    expect(planReplacements(plan, i, () => true)).toBe(plan);
  });

  it("keeps the refusal when the plan has no desired object at its place", () => {
    const i = input();
    const plan = buildPlan(i);
    expect(planReplacements(plan, { ...i, desired: [] }, () => true)).toBe(plan);
  });

  it("replaces for the immutable fields only, and names them all in its warning", () => {
    const other = "33333333-3333-4333-8333-333333333333";
    const moved = {
      ...container("img:2", "other"),
      source_config: { listener_id: other, listener_config: { k8s_namespace: "other" } },
    };
    const i: BuildPlanInput = {
      desired: [desiredDeployment("web", moved)],
      live: { deployments: [liveDeployment({ name: "web", ...container("img:1") })] },
    };
    const plan = buildPlan(i);
    expect(plan.changes[0]?.revision_fields).toEqual(["source_revision_config.image_uri"]);
    const [web] = planReplacements(plan, i, () => true).changes;
    const immutable = ["source_config.listener_id", "source_config.listener_config.k8s_namespace"];
    expect(web?.replaces).toEqual({ id: i.live.deployments[0]!.id, fields: immutable });
    expect(web?.warnings.map((w) => w.field)).toEqual([immutable.join(", ")]);
  });

  it("keeps the refusal of an object that cannot be planned (not_planned), even when allowed", () => {
    const i = input();
    i.desired = [{ ...i.desired[0]!, errors: [{ field: "secrets", message: "TOKEN is not set" }] }];
    const plan = buildPlan(i);
    expect(plan.changes[0]).toMatchObject({ action: "refused", not_planned: true });
    expect(planReplacements(plan, i, () => true)).toBe(plan);
  });
});
