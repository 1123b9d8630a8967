import { describe, expect, it } from "vitest";
import { type BuildPlanInput, buildPlan } from "../../../src/diff/plan/build-plan.js";
import type { ManifestKind } from "../../../src/schema/manifest.js";
import { desiredDeployment, liveDeployment, loadedAccess } from "../helpers.js";

// buildPlan's edges: the base each kind is classified against, the organization that could not be
// read, the tag rule only for a change that is sent, a create's secret names, objects with errors.

const organization = {
  id: "org-1",
  display_name: "acme",
  jit_provisioning_enabled: false,
  invites_enabled: false,
  sso_login_slug: "acme",
};

const image = (uri: string) => ({
  source: "internal_container" as const,
  source_revision_config: { image_uri: uri },
});

/** The last applied spec, for one kind and name only. */
const appliedOnly =
  (kind: ManifestKind, name: string, spec: Record<string, unknown>): BuildPlanInput["applied"] =>
  (k, n) =>
    k === kind && n === name ? { spec, fingerprints: undefined } : undefined;

describe("buildPlan: the three-way base of each kind", () => {
  it("an OrganizationAccess is classified against its own record", () => {
    // git = last applied (true), live moved to false: drift.
    const change = buildPlan({
      desired: [{ loaded: loadedAccess({ invites_enabled: true }) }],
      live: { deployments: [], organization },
      applied: appliedOnly("OrganizationAccess", "access", { invites_enabled: true }),
    }).changes[0];
    expect(change?.fields).toEqual([
      { field: "invites_enabled", class: "in_place", old: false, new: true, origin: "drift" },
    ]);
  });

  it("a Deployment is classified against its own record", () => {
    const change = buildPlan({
      desired: [desiredDeployment("web", image("img:1"))],
      live: { deployments: [liveDeployment({ name: "web", ...image("img:2") })] },
      applied: appliedOnly("Deployment", "web", image("img:1")),
    }).changes[0];
    expect(change?.fields?.map((f) => f.origin)).toEqual(["drift"]);
  });
});

describe("buildPlan: an organization that could not be read", () => {
  it("refuses the OrganizationAccess with a reason, no request and no diff", () => {
    const plan = buildPlan({
      desired: [{ loaded: loadedAccess({ invites_enabled: true }) }],
      live: { deployments: [] },
    });
    expect(plan.changes[0]).toMatchObject({
      kind: "OrganizationAccess",
      action: "refused",
      request: null,
      diff: [],
      errors: [
        { field: "", message: "the organization's settings could not be read (is the platform URL set?)" },
      ],
    });
    expect(plan.summary).toEqual({ create: 0, update: 0, noop: 0, refused: 1 });
  });
});

describe("buildPlan: build_on_push with a tag", () => {
  const sourceConfig = {
    integration_id: "33333333-3333-4333-8333-333333333333",
    repo_url: "https://github.com/acme/tagged",
    deployment_type: "dev" as const,
    build_on_push: true,
  };
  const revision = { repo_ref: "refs/tags/v1", graph_config_path: "langgraph.json" };
  const live = () =>
    liveDeployment({
      name: "tagged",
      source: "gitrepo",
      source_config: sourceConfig,
      source_revision_config: revision,
    });

  it("a deployment already so live, with nothing to send, is a noop (no request to refuse)", () => {
    const change = buildPlan({
      desired: [desiredDeployment("tagged", { source: "gitrepo", source_revision_config: revision })],
      live: { deployments: [live()] },
    }).changes[0];
    expect(change).toMatchObject({ action: "noop", errors: [], request: null });
  });

  it("any change to send to it is refused", () => {
    const change = buildPlan({
      desired: [
        desiredDeployment("tagged", {
          source: "gitrepo",
          source_revision_config: { ...revision, graph_config_path: "other.json" },
        }),
      ],
      live: { deployments: [live()] },
    }).changes[0];
    expect(change?.action).toBe("refused");
    expect(change?.errors.map((e) => e.field)).toEqual(["source_config.build_on_push"]);
  });
});

describe("buildPlan: a create", () => {
  it("lists its secret names sorted", () => {
    const change = buildPlan({
      desired: [
        desiredDeployment("web", {
          ...image("img:1"),
          secrets: [
            { name: "ZETA", value: "z" },
            { name: "ALPHA", value: "a" },
          ],
        }),
      ],
      live: { deployments: [] },
    }).changes[0];
    expect(change?.changed_secrets).toEqual(["ALPHA", "ZETA"]);
  });
});

describe("buildPlan: objects prepared with errors", () => {
  it("an empty error list plans as usual", () => {
    const change = buildPlan({
      desired: [{ ...desiredDeployment("web", image("img:1")), errors: [] }],
      live: { deployments: [] },
    }).changes[0];
    expect(change?.action).toBe("create");
    expect(change?.not_planned).toBeUndefined();
  });

  it("errors refuse it as not planned, with no request, after its own errors", () => {
    const error = { field: "secrets", message: "environment variable TOKEN is not set" };
    const change = buildPlan({
      desired: [{ ...desiredDeployment("web", image("img:1")), errors: [error] }],
      live: { deployments: [] },
    }).changes[0];
    expect(change).toMatchObject({ action: "refused", not_planned: true, request: null, errors: [error] });
  });
});
