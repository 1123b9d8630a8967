import { describe, expect, it } from "vitest";
import { buildPlan } from "../../../src/diff/plan/build-plan.js";
import { redactPlan } from "../../../src/diff/secrets/redact.js";
import { fingerprintSecrets } from "../../../src/diff/secrets/secret-fingerprint.js";
import { MASKED_SECRET_VALUE } from "../../../src/schema/deployment.js";
import { desiredDeployment, liveDeployment, loadedAccess } from "../helpers.js";

const LISTENER = "22222222-2222-4222-8222-222222222222";
const container = (image: string) => ({
  source: "external_container" as const,
  source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: "agents" } },
  source_revision_config: { image_uri: image },
});

describe("buildPlan: deployments", () => {
  it("creates a missing deployment with the POST body, secrets resolved", () => {
    const plan = buildPlan({
      desired: [
        desiredDeployment("web", { ...container("img:1"), secrets: [{ name: "K", value: "s3cret" }] }),
      ],
      live: { deployments: [] },
    });
    const [change] = plan.changes;
    expect(plan.summary).toEqual({ create: 1, update: 0, noop: 0, refused: 0 });
    expect(change?.request).toEqual({
      method: "POST",
      path: "/v2/deployments",
      body: {
        name: "web",
        ...container("img:1"),
        secrets: [{ name: "K", value: "s3cret" }],
      },
    });
    expect(change?.diff).toContainEqual({
      op: "add",
      path: "/secrets",
      value: [{ name: "K", value: "s3cret" }],
    });
    expect(JSON.stringify(redactPlan(plan))).not.toContain("s3cret");
  });

  it("is a noop when only read-only fields, server defaults and CPU rounding differ", () => {
    const live = liveDeployment({
      name: "web",
      ...container("img:1"),
      source_config: {
        listener_id: LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: "https://x",
        resource_spec: { cpu: 0.4, cpu_limit: 0.8, memory_mb: 512, memory_limit_mb: 1024, queue_cpu: 0.4 },
      },
      source_revision_config: { image_uri: "img:1", repo_commit_sha: null },
      image_version: "1.2.3",
    });
    const desired = desiredDeployment("web", {
      ...container("img:1"),
      source_config: { ...container("").source_config, resource_spec: { cpu: 0.35, memory_mb: 512 } },
    });
    const plan = buildPlan({ desired: [desired], live: { deployments: [live] } });
    expect(plan.changes[0]).toMatchObject({ action: "noop", request: null, diff: [], errors: [] });
  });

  it("sends only changed fields, the whole resource_spec, and flags a new revision", () => {
    const live = liveDeployment({
      name: "web",
      ...container("img:1"),
      source_config: {
        listener_id: LISTENER,
        listener_config: { k8s_namespace: "agents" },
        custom_url: "https://old",
        resource_spec: { cpu: 1, cpu_limit: 2, memory_mb: 512, memory_limit_mb: 1024, labels: { team: "a" } },
      },
    });
    const desired = desiredDeployment("web", {
      ...container("img:1"),
      source_config: {
        ...container("").source_config,
        custom_url: "https://new",
        resource_spec: { cpu: 2, memory_mb: 512 },
      },
    });
    const [change] = buildPlan({ desired: [desired], live: { deployments: [live] } }).changes;
    expect(change?.action).toBe("update");
    expect(change?.new_revision).toBe(true);
    expect(change?.revision_fields).toEqual(["source_config.resource_spec.cpu"]);
    expect(change?.in_place_fields).toEqual(["source_config.custom_url"]);
    // cpu_limit and memory_limit_mb were server defaults: omitted so they follow; labels unmanaged: kept.
    expect(change?.request?.body).toEqual({
      source_config: {
        custom_url: "https://new",
        resource_spec: { cpu: 2, memory_mb: 512, labels: { team: "a" } },
      },
    });
    // Sorted by path (src/diff/diff-order.ts), not in fast-json-patch's reverse key order.
    expect(change?.diff).toEqual([
      { op: "replace", path: "/source_config/custom_url", value: "https://new" },
      { op: "replace", path: "/source_config/resource_spec/cpu", value: 2 },
    ]);
  });

  it("refuses an immutable change, naming field, values and file:line", () => {
    const live = liveDeployment({ name: "web", ...container("img:1") });
    const desired = desiredDeployment("web", {
      ...container("img:1"),
      source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: "other" } },
    });
    const [change] = buildPlan({ desired: [desired], live: { deployments: [live] } }).changes;
    expect(change?.action).toBe("refused");
    expect(change?.request).toBeNull();
    expect(change?.errors).toHaveLength(1);
    expect(change?.errors[0]?.field).toBe("source_config.listener_config.k8s_namespace");
    expect(change?.errors[0]?.message).toContain('live "agents", desired "other"');
    expect(change?.errors[0]?.message).toContain("deployments/web.yaml:5");
  });

  it("never sends listener_config: an unchanged namespace stays out of a PATCH, a null one only warns", () => {
    const live = liveDeployment({
      name: "web",
      ...container("img:1"),
      source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: "agents" } },
    });
    const [same] = buildPlan({
      desired: [
        desiredDeployment("web", {
          ...container("img:1"),
          source_config: {
            listener_id: LISTENER,
            listener_config: { k8s_namespace: "agents" },
            custom_url: "https://x",
          },
        }),
      ],
      live: { deployments: [live] },
    }).changes;
    expect(same?.action).toBe("update");
    expect(same?.request?.body).toEqual({ source_config: { custom_url: "https://x" } });
    const [cleared] = buildPlan({
      desired: [
        desiredDeployment("web", {
          ...container("img:1"),
          source_config: { listener_id: LISTENER, listener_config: { k8s_namespace: null } },
        }),
      ],
      live: { deployments: [live] },
    }).changes;
    expect(cleared?.action).toBe("noop");
    expect(cleared?.warnings.map((w) => w.field)).toEqual(["source_config.listener_config.k8s_namespace"]);
  });

  it("refuses a change of source", () => {
    const live = liveDeployment({ name: "web", source: "internal_container" });
    const [change] = buildPlan({
      desired: [desiredDeployment("web", container("img"))],
      live: { deployments: [live] },
    }).changes;
    expect(change?.action).toBe("refused");
    expect(change?.errors.map((e) => e.field)).toContain("source");
  });

  it("ignores custom_url for gitrepo and warns on a field it cannot clear", () => {
    const live = liveDeployment({
      name: "g",
      source: "gitrepo",
      source_config: { custom_url: "https://server-set", build_command: "make" },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
    });
    const desired = desiredDeployment("g", {
      source: "gitrepo",
      source_config: { custom_url: "https://mine", build_command: null },
      source_revision_config: { repo_ref: "main" },
    });
    const [change] = buildPlan({ desired: [desired], live: { deployments: [live] } }).changes;
    expect(change?.action).toBe("noop");
    expect(change?.warnings.map((w) => w.field)).toEqual(["source_config.build_command"]);
  });

  it("passes revision_source through with a revision-creating change only", () => {
    const live = liveDeployment({
      name: "g",
      source: "gitrepo",
      source_revision_config: { repo_ref: "main" },
    });
    const spec = { source: "gitrepo" as const, revision_source: "internal_source" as const };
    const changed = buildPlan({
      desired: [desiredDeployment("g", { ...spec, source_revision_config: { repo_ref: "dev" } })],
      live: { deployments: [live] },
    }).changes[0];
    expect(changed?.request?.body).toEqual({
      source_revision_config: { repo_ref: "dev" },
      revision_source: "internal_source",
    });
    const same = buildPlan({
      desired: [desiredDeployment("g", { ...spec, source_revision_config: { repo_ref: "main" } })],
      live: { deployments: [live] },
    }).changes[0];
    expect(same?.action).toBe("noop");
  });
});

describe("buildPlan: secrets", () => {
  const live = liveDeployment({
    name: "s",
    ...container("img"),
    secrets: [
      { name: "A", value: MASKED_SECRET_VALUE },
      { name: "B", value: MASKED_SECRET_VALUE },
    ],
  });
  const spec = (a: string) => ({
    ...container("img"),
    secrets: [
      { name: "B", value: "b" },
      { name: "A", value: a },
    ],
  });

  it("sends the list with a note when no fingerprints are recorded", () => {
    const [change] = buildPlan({
      desired: [desiredDeployment("s", spec("a"))],
      live: { deployments: [live] },
    }).changes;
    expect(change?.action).toBe("update");
    expect(change?.warnings).toContainEqual({
      field: "secrets",
      message: "secret values unknown, will be sent",
    });
    expect(change?.request?.body.secrets).toEqual([
      { name: "B", value: "b" },
      { name: "A", value: "a" },
    ]);
  });

  it("is a noop when the recorded fingerprints match, in any order", () => {
    const fp = fingerprintSecrets([
      { name: "A", value: "a" },
      { name: "B", value: "b" },
    ]);
    const [change] = buildPlan({
      desired: [desiredDeployment("s", spec("a"))],
      live: { deployments: [live] },
      fingerprints: (kind, name) => (kind === "Deployment" && name === "s" ? fp : undefined),
    }).changes;
    expect(change?.action).toBe("noop");
    expect(change?.warnings).toEqual([]);
  });

  it("sends the whole list when one value changed, and redacts it everywhere", () => {
    const fp = fingerprintSecrets([
      { name: "A", value: "a" },
      { name: "B", value: "b" },
    ]);
    const plan = buildPlan({
      desired: [desiredDeployment("s", spec("new-a-value"))],
      live: { deployments: [live] },
      fingerprints: () => fp,
    });
    const [change] = plan.changes;
    expect(change?.changed_secrets).toEqual(["A"]);
    expect(change?.revision_fields).toEqual(["secrets"]);
    expect(change?.request?.body.secrets).toHaveLength(2);
    expect(change?.diff).toEqual([{ op: "replace", path: "/secrets/0/value", value: "new-a-value" }]);
    const shown = JSON.stringify(redactPlan(plan));
    expect(shown).not.toContain("new-a-value");
    expect(shown).not.toContain('"b"');
    expect(shown).toContain("<redacted>");
  });

  it("sends the whole list when a secret is removed", () => {
    const fp = fingerprintSecrets([{ name: "A", value: "a" }]);
    const [change] = buildPlan({
      desired: [desiredDeployment("s", { ...container("img"), secrets: [{ name: "A", value: "a" }] })],
      live: { deployments: [live] },
      fingerprints: () => fp,
    }).changes;
    expect(change?.request?.body).toEqual({ secrets: [{ name: "A", value: "a" }] });
    expect(change?.diff).toEqual([{ op: "remove", path: "/secrets/1" }]);
  });
});

describe("buildPlan: organization access", () => {
  const org = {
    id: "o",
    display_name: "Acme",
    jit_provisioning_enabled: true,
    invites_enabled: true,
    sso_login_slug: "acme",
  };

  it("patches the changed settings and says who can join after", () => {
    const [change] = buildPlan({
      desired: [{ loaded: loadedAccess({ jit_provisioning_enabled: false, invites_enabled: true }) }],
      live: { deployments: [], organization: org },
    }).changes;
    expect(change?.request).toEqual({
      method: "PATCH",
      path: "/api/v1/organizations/current/info",
      body: { jit_provisioning_enabled: false },
    });
    expect(change?.effect).toMatch(/pending invite/);
  });

  it("leaves unmanaged settings alone", () => {
    const [change] = buildPlan({
      desired: [{ loaded: loadedAccess({ invites_enabled: true }) }],
      live: { deployments: [], organization: org },
    }).changes;
    expect(change?.action).toBe("noop");
  });
});
