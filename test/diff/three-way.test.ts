import { describe, expect, it } from "vitest";
import { buildPlan } from "../../src/diff/plan/build-plan.js";
import type { PlannedChange } from "../../src/diff/plan/plan-types.js";
import { withoutDrift } from "../../src/diff/three-way.js";
import type { DeploymentSpec } from "../../src/schema/manifest.js";
import { desiredDeployment, liveDeployment, loadedAccess } from "./helpers.js";

// Three-way: git, live, and what plumb last applied. Each differing field says which side moved.

// `scale` stands for any field: it is resource_spec.max_scale (sent with the whole resource_spec).
const spec = (image: string, scale: number, cpu = 1): DeploymentSpec => ({
  source: "internal_container",
  source_config: { resource_spec: { max_scale: scale, cpu } },
  source_revision_config: { image_uri: image },
});

function plan(git: DeploymentSpec, live: DeploymentSpec, applied: DeploymentSpec | undefined): PlannedChange {
  const deployment = liveDeployment({
    name: "a",
    source: "internal_container",
    source_config: live.source_config,
    source_revision_config: live.source_revision_config,
  });
  return buildPlan({
    desired: [desiredDeployment("a", git)],
    live: { deployments: [deployment] },
    applied: () => (applied ? { spec: applied, fingerprints: undefined } : undefined),
  }).changes[0]!;
}

const origins = (change: PlannedChange) =>
  Object.fromEntries((change.fields ?? []).map((f) => [f.field, f.origin]));

describe("three-way classification", () => {
  it("git moved: change; live moved: drift; both to different values: conflict", () => {
    const applied = spec("img:1", 1, 1);
    const change = plan(spec("img:2", 1, 2), spec("img:1", 5, 4), applied);
    expect(origins(change)).toEqual({
      "source_revision_config.image_uri": "change",
      "source_config.resource_spec.max_scale": "drift",
      "source_config.resource_spec.cpu": "conflict",
    });
  });

  it("without a record of the last apply, no origin is claimed", () => {
    expect(origins(plan(spec("img:2", 1), spec("img:1", 1), undefined))).toEqual({
      "source_revision_config.image_uri": undefined,
    });
  });

  it("an unknown base (applied, but not known what) makes every differing field unknown, held back like drift", () => {
    const deployment = liveDeployment({
      name: "a",
      source: "internal_container",
      source_revision_config: { image_uri: "img:1" },
    });
    const change = buildPlan({
      desired: [desiredDeployment("a", spec("img:2", 1))],
      live: { deployments: [deployment] },
      applied: () => "unknown",
    }).changes[0]!;
    expect(Object.values(origins(change)).length).toBeGreaterThan(0);
    expect(new Set(Object.values(origins(change)))).toEqual(new Set(["unknown"]));
    expect(withoutDrift(change)).toMatchObject({ action: "noop", request: null });
  });

  it("withoutDrift sends only the changes; only drift leaves nothing to send", () => {
    const applied = spec("img:1", 1, 1);
    const mixed = withoutDrift(plan(spec("img:2", 1, 1), spec("img:1", 5, 3), applied));
    expect(mixed.action).toBe("update");
    expect(mixed.request?.body).toEqual({ source_revision_config: { image_uri: "img:2" } });
    expect(mixed.revision_fields).toEqual(["source_revision_config.image_uri"]);

    const driftOnly = withoutDrift(plan(spec("img:1", 1, 1), spec("img:1", 5, 3), applied));
    expect(driftOnly.action).toBe("noop");
    expect(driftOnly.request).toBeNull();

    // A drifted resource_spec sub-field keeps its live value in the whole resource_spec sent.
    const resources = withoutDrift(plan(spec("img:1", 1, 2), spec("img:1", 1, 1), spec("img:1", 1, 1)));
    expect(resources.action).toBe("update");
    const keep = withoutDrift(plan(spec("img:2", 1, 1), spec("img:1", 1, 3), applied));
    expect(
      (keep.request?.body.source_config as { resource_spec?: unknown } | undefined)?.resource_spec,
    ).toBeUndefined();
  });

  it("OrganizationAccess settings are classified the same way", () => {
    const org = { id: "o", name: "acme", jit_provisioning_enabled: true, invites_enabled: true } as never;
    const change = buildPlan({
      desired: [{ loaded: loadedAccess({ jit_provisioning_enabled: false, invites_enabled: true }) }],
      live: { deployments: [], organization: { ...(org as object), invites_enabled: false } as never },
      applied: () => ({
        spec: { jit_provisioning_enabled: true, invites_enabled: true },
        fingerprints: undefined,
      }),
    }).changes[0]!;
    expect(origins(change)).toEqual({ jit_provisioning_enabled: "change", invites_enabled: "drift" });
  });
});
