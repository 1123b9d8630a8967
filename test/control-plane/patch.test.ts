/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, ManualClock, container, gitrepo, start } from "./helpers.js";

/** Spec 2.4's ResourceSpec fields in its order, the deprecated ones last. */
const RESOURCE_SPEC_FIELDS = [
  ...["min_scale", "max_scale", "cpu", "cpu_limit", "memory_mb", "memory_limit_mb"],
  ...["queue_min_scale", "queue_max_scale", "queue_cpu", "queue_cpu_limit", "queue_memory_mb"],
  ...["queue_memory_limit_mb", "redis_cpu", "redis_cpu_limit", "redis_memory_mb", "redis_memory_limit_mb"],
  ...["db_cpu", "db_cpu_limit", "db_memory_mb", "db_memory_limit_mb", "db_storage_gi", "db_max_connections"],
  ...["labels", "annotations", "service_account_name", "image_pull_secrets", "volumes", "volume_mounts"],
  ...["init_containers", "sidecars", "orchestrator_cpu", "orchestrator_cpu_limit", "orchestrator_memory_mb"],
  ...["orchestrator_memory_limit_mb", "orchestrator_min_scale", "orchestrator_max_scale", "executor_cpu"],
  ...["executor_cpu_limit", "executor_memory_mb", "executor_memory_limit_mb"],
];
/** A ResourceSpec answer: `set` and every other field null. */
const withNulls = (set: Record<string, unknown>) =>
  Object.fromEntries(RESOURCE_SPEC_FIELDS.map((field) => [field, set[field] ?? null]));

let saas: Api;
let self: Api;
beforeAll(async () => {
  saas = await start();
  self = await start({ mode: "self-hosted" });
});
afterAll(async () => {
  await saas.cp.stop();
  await self.cp.stop();
});

const create = async (api: Api, body: object): Promise<Record<string, any>> => {
  const r = await api.call("POST", "/v2/deployments", body);
  expect(r.status).toBe(201);
  return r.body as Record<string, any>;
};

describe("PATCH revision triggers", () => {
  it("creates a revision for each trigger and returns the new latest_revision_id", async () => {
    const d = await create(saas, gitrepo("triggers"));
    let latest = d.latest_revision_id;
    for (const body of [
      { source_revision_config: { repo_ref: "release" } },
      // Spec 4.1 rule 1 says non-null, not changed: the same ref again is a new revision (a rebuild).
      { source_revision_config: { repo_ref: "release" } },
      { source_revision_config: { graph_config_path: "agents/langgraph.json" } },
      { secrets: [{ name: "A", value: "1" }] },
    ]) {
      const r = await saas.call("PATCH", `/v2/deployments/${d.id}`, body);
      expect(r.status).toBe(200);
      expect(r.body.latest_revision_id).not.toBe(latest);
      latest = r.body.latest_revision_id;
    }
    const revisions = await saas.call("GET", `/v2/deployments/${d.id}/revisions`);
    expect(revisions.body.resources).toHaveLength(5);
    expect(revisions.body.resources[0].id).toBe(latest);
    const current = (await saas.call("GET", `/v2/deployments/${d.id}`)).body;
    expect(current.secrets).toEqual([{ name: "A", value: "********" }]);
    expect(current.source_revision_config).toMatchObject({
      repo_ref: "release",
      graph_config_path: "agents/langgraph.json",
    });
  });

  it("treats null or absent fields as unchanged and makes no revision for in-place fields", async () => {
    const d = await create(saas, gitrepo("in-place"));
    const r = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { build_on_push: true, install_command: "npm ci", repo_url: null },
      source_revision_config: { repo_ref: null },
      secrets: null,
    });
    expect(r.status).toBe(200);
    expect(r.body.latest_revision_id).toBe(d.latest_revision_id);
    expect(r.body.source_config).toMatchObject({
      build_on_push: true,
      install_command: "npm ci",
      repo_url: d.source_config.repo_url,
    });
    expect(r.body.secrets).toEqual(d.secrets);
  });

  it("leaves a deployment as it was when in-place fields are sent unchanged", async () => {
    const clock = new ManualClock();
    const api = await start({ clock });
    try {
      const d = await create(
        api,
        gitrepo("unchanged", { source_config: { ...gitrepo("x").source_config, build_on_push: true } }),
      );
      clock.advance(5);
      const same = await api.call("PATCH", `/v2/deployments/${d.id}`, {
        source_config: { build_on_push: true, custom_url: d.source_config.custom_url },
      });
      expect(same.body).toMatchObject({ updated_at: d.updated_at, latest_revision_id: d.latest_revision_id });
      const changed = await api.call("PATCH", `/v2/deployments/${d.id}`, {
        source_config: { build_command: "make" },
      });
      expect(changed.body.updated_at).not.toBe(d.updated_at);
    } finally {
      await api.cp.stop();
    }
  });

  it("accepts an unchangeable field with its current value, refuses another value naming the field", async () => {
    const d = await create(saas, gitrepo("immutable"));
    const same = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: {
        repo_url: d.source_config.repo_url,
        deployment_type: "dev",
        custom_url: d.source_config.custom_url,
      },
    });
    expect(same.status).toBe(200);
    for (const [field, value] of [
      ["repo_url", "https://elsewhere"],
      ["deployment_type", "prod"],
      ["integration_id", "20000000-0000-4000-8000-000000000002"],
      ["custom_url", "https://mine.example.com"],
    ]) {
      const r = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
        source_config: { [field as string]: value },
      });
      expect(r.status, field).toBe(400);
      expect(r.body.detail).toContain(`source_config.${field}`);
    }
  });

  it("takes name and source as unchangeable fields: the current value is ignored, another is a 400", async () => {
    // Spec 4.1 rule 2 names them; decisions.md "Patch semantics" says how an unchangeable field is answered.
    const d = await create(saas, gitrepo("named"));
    const same = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      name: "named",
      source: "gitrepo",
      source_config: { install_command: "npm ci" },
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: "named", source: "gitrepo" });
    expect(same.body.latest_revision_id).toBe(d.latest_revision_id);
    expect(same.body.source_config.install_command).toBe("npm ci");
    const nulls = await saas.call("PATCH", `/v2/deployments/${d.id}`, { name: null, source: null });
    expect(nulls.status).toBe(200);
    for (const [field, value] of [
      ["name", "renamed"],
      ["source", "internal_source"],
    ] as const) {
      const r = await saas.call("PATCH", `/v2/deployments/${d.id}`, { [field]: value });
      expect(r.status, field).toBe(400);
      expect(r.body.detail).toMatch(new RegExp(`^${field} cannot be changed`));
    }
    const bad = await saas.call("PATCH", `/v2/deployments/${d.id}`, { source: "ftp", name: 7 });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: string[] }) => i.loc[1]).sort()).toEqual(["name", "source"]);
    const after = (await saas.call("GET", `/v2/deployments/${d.id}`)).body;
    expect(after).toMatchObject({ name: "named", source: "gitrepo", updated_at: same.body.updated_at });
  });

  it("refuses fields of another source with 400", async () => {
    const d = await create(saas, gitrepo("applicability"));
    const r = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_revision_config: { image_uri: "x:1" },
    });
    expect(r).toMatchObject({
      status: 400,
      body: { detail: expect.stringContaining("image_uri does not apply") },
    });
    const spec = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { resource_spec: { cpu: 1 } },
    });
    expect(spec.body.detail).toContain("resource_spec does not apply");
  });

  it("refuses build_on_push with a tag: 422 in one body, 400 against the stored ref", async () => {
    const d = await create(saas, gitrepo("tags"));
    const both = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { build_on_push: true },
      source_revision_config: { repo_ref: "refs/tags/v1" },
    });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(["body", "source_config", "build_on_push"]);
    expect(
      (
        await saas.call("PATCH", `/v2/deployments/${d.id}`, {
          source_revision_config: { repo_ref: "refs/tags/v1" },
        })
      ).status,
    ).toBe(200);
    const later = await saas.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { build_on_push: true },
    });
    expect(later.status).toBe(400);
  });

  it("replaces resource_spec whole, rounds CPU half up on the decimal and fills defaults", async () => {
    const d = await create(
      self,
      container("resources", {
        source_config: {
          listener_id: "10000000-0000-4000-8000-000000000001",
          resource_spec: { cpu: 0.35, memory_mb: 512, min_scale: 1, max_scale: 3, db_cpu: 1.05 },
        },
      }),
    );
    expect(d.source_config.resource_spec).toMatchObject({
      cpu: 0.4,
      cpu_limit: 0.8,
      memory_mb: 512,
      memory_limit_mb: 1024,
      queue_cpu: 0.4,
      queue_cpu_limit: 0.8,
      queue_memory_mb: 512,
      queue_memory_limit_mb: 1024,
      queue_min_scale: 1,
      queue_max_scale: 3,
      db_cpu: 1.1,
      db_cpu_limit: 2.2,
    });
    const r = await self.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { resource_spec: { redis_cpu: 0.25, redis_memory_mb: 256 } },
    });
    expect(r.body.latest_revision_id).not.toBe(d.latest_revision_id);
    expect(r.body.source_config.resource_spec).toEqual(
      withNulls({ redis_cpu: 0.3, redis_cpu_limit: 0.6, redis_memory_mb: 256, redis_memory_limit_mb: 256 }),
    );
  });

  // A pydantic response model dumps every field of ResourceSpec, null when unset; the answer left
  // unset ones out. In spec 2.4's order; the nested Kubernetes shapes stay as sent.
  it("answers every field of spec 2.4's ResourceSpec, null when unset", async () => {
    const sidecar = { name: "side", image: "registry.example.com/side:1" };
    const d = await create(
      self,
      container("every-resource-field", {
        source_config: {
          listener_id: "10000000-0000-4000-8000-000000000001",
          resource_spec: { memory_mb: 256, sidecars: [sidecar] },
        },
      }),
    );
    const expected = withNulls({
      memory_mb: 256,
      memory_limit_mb: 512,
      queue_memory_mb: 256,
      queue_memory_limit_mb: 512,
      sidecars: [sidecar],
    });
    expect(Object.keys(d.source_config.resource_spec)).toEqual(RESOURCE_SPEC_FIELDS);
    expect(d.source_config.resource_spec).toEqual(expected);
    const read = await self.call("GET", `/v2/deployments/${d.id}`);
    expect(read.body.source_config.resource_spec).toEqual(expected);
    const listed = await self.call("GET", "/v2/deployments?name_contains=every-resource-field");
    expect(listed.body.resources[0].source_config.resource_spec).toEqual(expected);
  });

  it("answers listener_config's one field, null when unset", async () => {
    const d = await create(
      self,
      container("empty-listener-config", {
        source_config: { listener_id: "10000000-0000-4000-8000-000000000001", listener_config: {} },
      }),
    );
    expect(d.source_config.listener_config).toEqual({ k8s_namespace: null });
    const read = await self.call("GET", `/v2/deployments/${d.id}`);
    expect(read.body.source_config.listener_config).toEqual({ k8s_namespace: null });
  });

  // Spec 2.4 "ResourceSpec": CPU values are rounded to 1 decimal place; the deprecated fields
  // (orchestrator_*, executor_*) are CPU values too, and get no defaults (the spec gives none).
  it.each([
    ["orchestrator_cpu", 0.25, 0.3],
    ["orchestrator_cpu_limit", 0.35, 0.4],
    ["executor_cpu", 1.05, 1.1],
    ["executor_cpu_limit", 0.14, 0.1],
  ])("rounds the deprecated CPU field %s (%s → %s) on create and on PATCH", async (field, sent, kept) => {
    const deprecated = { [field]: sent, orchestrator_memory_mb: 300, executor_memory_mb: 2 };
    const d = await create(
      self,
      container(`deprecated-${field.replace(/_/g, "-")}`, {
        source_config: { listener_id: "10000000-0000-4000-8000-000000000001", resource_spec: deprecated },
      }),
    );
    const expected = withNulls({ [field]: kept, orchestrator_memory_mb: 300, executor_memory_mb: 2 });
    expect(d.source_config.resource_spec).toEqual(expected);
    const r = await self.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { resource_spec: deprecated },
    });
    expect(r.body.source_config.resource_spec).toEqual(expected);
    expect((await self.call("GET", `/v2/deployments/${d.id}`)).body.source_config.resource_spec).toEqual(
      expected,
    );
  });

  it("sets custom_url and listener fields on external_container; k8s_namespace cannot change", async () => {
    const d = await create(self, container("ext"));
    const r = await self.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { custom_url: "https://agent.example.com" },
    });
    expect(r.body.source_config.custom_url).toBe("https://agent.example.com");
    expect(r.body.latest_revision_id).toBe(d.latest_revision_id);
    const ns = await self.call("PATCH", `/v2/deployments/${d.id}`, {
      source_config: { listener_config: { k8s_namespace: "other" } },
    });
    expect(ns.status).toBe(400);
    expect(ns.body.detail).toContain("k8s_namespace");
  });

  it("checks a revision's fields against revision_source, which only a revision-creating patch uses", async () => {
    const d = await create(saas, gitrepo("revision-source"));
    const patch = (body: object) => saas.call("PATCH", `/v2/deployments/${d.id}`, body);
    const image = await patch({
      revision_source: "internal_container",
      source_revision_config: { image_uri: "registry.example.com/agent:2" },
    });
    expect(image.status).toBe(200);
    expect(image.body.latest_revision_id).not.toBe(d.latest_revision_id);
    const revision = (
      await saas.call("GET", `/v2/deployments/${d.id}/revisions/${image.body.latest_revision_id}`)
    ).body;
    expect(revision).toMatchObject({
      source: "internal_container",
      source_revision_config: { image_uri: "registry.example.com/agent:2" },
    });
    const wrongField = await patch({
      revision_source: "internal_container",
      source_revision_config: { repo_ref: "release" },
    });
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.detail).toContain("repo_ref does not apply to source internal_container");
    const ignored = await patch({
      revision_source: "internal_source",
      source_config: { build_command: "make" },
    });
    expect(ignored.status).toBe(200);
    expect(ignored.body.latest_revision_id).toBe(image.body.latest_revision_id);
    const plain = await patch({ secrets: [] });
    const next = (
      await saas.call("GET", `/v2/deployments/${d.id}/revisions/${plain.body.latest_revision_id}`)
    ).body;
    expect(next.source).toBe("gitrepo");

    const img = await create(saas, {
      name: "image-only",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "r/x:1" },
      secrets: [],
    });
    const toGit = await saas.call("PATCH", `/v2/deployments/${img.id}`, {
      revision_source: "gitrepo",
      source_revision_config: { repo_ref: "main" },
    });
    expect(toGit.status).toBe(400);
    expect(toGit.body.detail).toContain("revision_source gitrepo needs a gitrepo deployment");
    const ext = await create(self, container("ext-revision-source"));
    const fromExt = await self.call("PATCH", `/v2/deployments/${ext.id}`, {
      revision_source: "internal_container",
      source_revision_config: { image_uri: "r/x:2" },
    });
    expect(fromExt.status).toBe(400);
    expect(fromExt.body.detail).toContain("does not apply to source external_container");
  });

  it("replaces secret_references without a revision, on external_container only", async () => {
    const ext = await create(self, container("secret-refs"));
    expect(ext.secret_references).toBeNull();
    const refs = [{ name: "DB_URL", secret_name: "db", secret_key: "url" }];
    const set = await self.call("PATCH", `/v2/deployments/${ext.id}`, { secret_references: refs });
    expect(set.status).toBe(200);
    expect(set.body.secret_references).toEqual(refs);
    expect(set.body.latest_revision_id).toBe(ext.latest_revision_id);
    const kept = await self.call("PATCH", `/v2/deployments/${ext.id}`, { secret_references: null });
    expect(kept.body.secret_references).toEqual(refs);
    const emptied = await self.call("PATCH", `/v2/deployments/${ext.id}`, { secret_references: [] });
    expect(emptied.body.secret_references).toEqual([]);
    expect(emptied.body.latest_revision_id).toBe(ext.latest_revision_id);
    const git = await create(saas, gitrepo("secret-refs-git"));
    const onGit = await saas.call("PATCH", `/v2/deployments/${git.id}`, { secret_references: refs });
    expect(onGit.status).toBe(400);
    expect(onGit.body.detail).toContain("secret_references does not apply to source gitrepo");
    const created = await saas.call(
      "POST",
      "/v2/deployments",
      gitrepo("refs-on-create", { secret_references: refs }),
    );
    expect(created.status).toBe(400);
  });

  it("answers 404 for another tenant's deployment", async () => {
    const other = await start({
      apiKeys: [
        { key: "k1", tenants: ["11111111-0000-4000-8000-000000000001"] },
        { key: "k2", tenants: ["22222222-0000-4000-8000-000000000002"] },
      ],
    });
    try {
      const d = (await other.call("POST", "/v2/deployments", gitrepo("mine"), { "x-api-key": "k1" })).body;
      const r = await other.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] }, { "x-api-key": "k2" });
      expect(r).toMatchObject({ status: 404, body: { detail: `Deployment ID ${d.id} not found.` } });
      expect(
        (await other.call("GET", "/v2/deployments", undefined, { "x-api-key": "k2" })).body.resources,
      ).toEqual([]);
    } finally {
      await other.cp.stop();
    }
  });
});
