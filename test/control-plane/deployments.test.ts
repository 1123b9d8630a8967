import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type Api, ManualClock, container, gitrepo, start } from "./helpers.js";

let api: Api;
let selfHosted: Api;
beforeAll(async () => {
  api = await start();
  selfHosted = await start({ mode: "self-hosted" });
});
afterAll(async () => {
  await api.cp.stop();
  await selfHosted.cp.stop();
});

describe("create and get", () => {
  it("answers 201 with the full deployment, masked secrets and the server's custom_url", async () => {
    const created = await api.call("POST", "/v2/deployments", gitrepo("support-agent"));
    expect(created.status).toBe(201);
    const d = created.body;
    expect(d).toMatchObject({
      name: "support-agent",
      source: "gitrepo",
      tenant_id: DEFAULT_TENANT_ID,
      image_version: null,
    });
    expect(d.secrets).toEqual([{ name: "OPENAI_API_KEY", value: "********" }]);
    expect(JSON.stringify(d)).not.toContain("sk-secret");
    expect(d.source_config.custom_url).toBe(`${api.cp.url}/agents/${d.id}`);
    expect(d.latest_revision_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(d.source_revision_config.repo_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    const got = await api.call("GET", `/v2/deployments/${d.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(d);
  });

  it("refuses a duplicate name with 409", async () => {
    await api.call("POST", "/v2/deployments", gitrepo("dup"));
    const again = await api.call("POST", "/v2/deployments", gitrepo("dup"));
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain("dup");
  });

  it("creates the tracing project of the same name", async () => {
    await api.call("POST", "/v2/deployments", gitrepo("traced"));
    const projects = await api.call("GET", "/api/v1/sessions?name=traced");
    expect(projects.body).toEqual([{ id: expect.any(String), name: "traced" }]);
    expect((await api.call("GET", "/api/v1/sessions?name=nope")).body).toEqual([]);
    expect((await api.call("GET", "/api/v1/sessions?name=traced&name=nope")).body).toEqual([]);
  });

  it("accepts deployment_type on internal_source as the hosted service does, with no effect", async () => {
    const body = {
      name: "uploaded-agent",
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { graph_config_path: "langgraph.json" },
      secrets: [],
    };
    const created = await api.call("POST", "/v2/deployments", body);
    expect(created.status).toBe(201);
    expect(created.body.source_config.deployment_type ?? null).toBeNull();
    const patched = await api.call("PATCH", `/v2/deployments/${created.body.id}`, {
      source_config: { deployment_type: "prod" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.source_config.deployment_type ?? null).toBeNull();
    // Still refused where the spec's "validated according to source" holds and no client sends it.
    const onContainer = await api.call("POST", "/v2/deployments", {
      ...body,
      name: "image-agent",
      source: "internal_container",
      source_revision_config: { image_uri: "x:1" },
    });
    expect(onContainer).toMatchObject({
      status: 400,
      body: { detail: expect.stringContaining("deployment_type") },
    });
  });

  it("answers 404 with the spec's detail for an unknown id, 422 for a non-uuid", async () => {
    const id = "3f1b6f0e-0000-4000-8000-000000000abc";
    expect(await api.call("GET", `/v2/deployments/${id}`)).toMatchObject({
      status: 404,
      body: { detail: `Deployment ID ${id} not found.` },
    });
    expect((await api.call("GET", "/v2/deployments/not-a-uuid")).status).toBe(422);
  });

  it("applies the installation mode: gitrepo SaaS only, external_container self-hosted only", async () => {
    const onSaas = await api.call("POST", "/v2/deployments", container("c1"));
    expect(onSaas.status).toBe(400);
    expect(onSaas.body.detail).toContain("self-hosted");
    const onSelf = await selfHosted.call("POST", "/v2/deployments", gitrepo("g1"));
    expect(onSelf.status).toBe(400);
    expect(onSelf.body.detail).toContain("SaaS");
    expect((await selfHosted.call("POST", "/v2/deployments", container("c1"))).status).toBe(201);
  });

  it("refuses fields that do not apply to the source, and a missing graph_config_path (400)", async () => {
    const body = gitrepo("wrong-field");
    body.source_config = {
      ...body.source_config,
      listener_id: "10000000-0000-4000-8000-000000000001",
    } as never;
    const r = await api.call("POST", "/v2/deployments", body);
    expect(r).toMatchObject({
      status: 400,
      body: { detail: expect.stringContaining("source_config.listener_id") },
    });
    const noPath = gitrepo("no-path", { source_revision_config: { repo_ref: "main" } });
    expect((await api.call("POST", "/v2/deployments", noPath)).body.detail).toContain("graph_config_path");
    const image = container("internal", {
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "x:1", graph_config_path: "g.json" },
    });
    expect((await api.call("POST", "/v2/deployments", image)).body.detail).toContain(
      "graph_config_path does not apply",
    );
    const unknownIntegration = gitrepo("unknown-int");
    unknownIntegration.source_config.integration_id = "99999999-0000-4000-8000-000000000000";
    expect((await api.call("POST", "/v2/deployments", unknownIntegration)).body.detail).toContain(
      "integration_id",
    );
  });
});

describe("required on create, beyond the schema (docs/control-plane.md Deployments)", () => {
  const without = (body: Record<string, unknown>, part: string, field: string) => {
    const copy = structuredClone(body) as Record<string, Record<string, unknown>>;
    delete (copy[part] as Record<string, unknown>)[field];
    return copy;
  };
  const internalContainer = {
    name: "ic",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "r/x:1" },
    secrets: [],
  };

  it("answers 400 naming each field a source needs, and an unknown listener", async () => {
    const cases: Array<[Api, Record<string, unknown>, string]> = [
      [api, without(gitrepo("need-int"), "source_config", "integration_id"), "source_config.integration_id"],
      [api, without(gitrepo("need-url"), "source_config", "repo_url"), "source_config.repo_url"],
      [
        api,
        without(gitrepo("need-ref"), "source_revision_config", "repo_ref"),
        "source_revision_config.repo_ref",
      ],
      [
        api,
        without(internalContainer, "source_revision_config", "image_uri"),
        "source_revision_config.image_uri",
      ],
      [selfHosted, without(container("need-img"), "source_revision_config", "image_uri"), "image_uri"],
      [
        selfHosted,
        without(container("need-lis"), "source_config", "listener_id"),
        "source_config.listener_id",
      ],
    ];
    for (const [server, body, field] of cases) {
      const r = await server.call("POST", "/v2/deployments", body);
      expect(r.status, field).toBe(400);
      expect(r.body.detail, field).toContain(field);
    }
    const unknown = container("unknown-lis");
    unknown.source_config = { ...unknown.source_config, listener_id: "99999999-0000-4000-8000-000000000000" };
    const r = await selfHosted.call("POST", "/v2/deployments", unknown);
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain("is not a known listener");
  });

  it("refuses an upload URL for external_container and for a deployment being deleted", async () => {
    const ext = (await selfHosted.call("POST", "/v2/deployments", container("no-upload"))).body;
    const refused = await selfHosted.call("POST", `/v2/deployments/${ext.id}/upload-url`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain("external_container");
    const slow = await start({ clock: new ManualClock(), deploymentReadySeconds: 5 });
    try {
      const doomed = (await slow.call("POST", "/v2/deployments", { ...internalContainer, name: "doomed" }))
        .body;
      expect((await slow.call("DELETE", `/v2/deployments/${doomed.id}`)).status).toBe(204);
      const late = await slow.call("POST", `/v2/deployments/${doomed.id}/upload-url`);
      expect(late.status).toBe(400);
      expect(late.body.detail).toContain("is being deleted");
    } finally {
      await slow.cp.stop();
    }
  });
});

describe("list", () => {
  it("pages with limit/offset and filters name_contains case-sensitively", async () => {
    const local = await start();
    try {
      for (const name of ["alpha-1", "alpha-2", "Alpha-3", "beta-1", "alpha-4"])
        expect((await local.call("POST", "/v2/deployments", gitrepo(name))).status).toBe(201);
      const first = await local.call("GET", "/v2/deployments?limit=2&name_contains=alpha");
      expect(first.body.resources.map((d: { name: string }) => d.name)).toEqual(["alpha-1", "alpha-2"]);
      expect(first.body.offset).toBe(2);
      const second = await local.call("GET", "/v2/deployments?limit=2&offset=2&name_contains=alpha");
      expect(second.body).toMatchObject({ resources: [{ name: "alpha-4" }], offset: 3 });
      const all = await local.call("GET", "/v2/deployments");
      expect(all.body.resources).toHaveLength(5);
      const repeated = await local.call("GET", "/v2/deployments?name_contains=alpha&name_contains=beta");
      expect(repeated.body.resources.map((d: { name: string }) => d.name)).toEqual(["beta-1"]);
      for (const bad of ["limit=0", "limit=101", "limit=x", "offset=-1"]) {
        const r = await local.call("GET", `/v2/deployments?${bad}`);
        expect(r.status, bad).toBe(422);
        expect(r.body.detail[0].loc[0]).toBe("query");
      }
    } finally {
      await local.cp.stop();
    }
  });
});

describe("delete", () => {
  it("answers 204, shows AWAITING_DELETE, then 404", async () => {
    const { ManualClock } = await import("./helpers.js");
    const clock = new ManualClock();
    const local = await start({ clock, deploymentReadySeconds: 5 });
    try {
      const d = (await local.call("POST", "/v2/deployments", gitrepo("doomed"))).body;
      expect(d.status).toBe("AWAITING_DATABASE");
      clock.advance(5);
      expect((await local.call("GET", `/v2/deployments/${d.id}`)).body.status).toBe("READY");
      expect((await local.call("DELETE", `/v2/deployments/${d.id}`)).status).toBe(204);
      expect((await local.call("GET", `/v2/deployments/${d.id}`)).body.status).toBe("AWAITING_DELETE");
      expect((await local.call("POST", "/v2/deployments", gitrepo("doomed"))).status).toBe(409);
      expect((await local.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] })).status).toBe(400);
      clock.advance(5);
      expect((await local.call("GET", `/v2/deployments/${d.id}`)).status).toBe(404);
      expect((await local.call("DELETE", `/v2/deployments/${d.id}`)).status).toBe(404);
      expect((await local.call("POST", "/v2/deployments", gitrepo("doomed"))).status).toBe(201);
    } finally {
      await local.cp.stop();
    }
  });
});
