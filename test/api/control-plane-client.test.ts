import nock from "nock";
import { describe, expect, it } from "vitest";
import {
  createControlPlaneClient,
  type ControlPlaneClientOptions,
} from "../../src/api/control-plane-client.js";
import { wrongApiUrl } from "../../src/api/transport/paged-list.js";
import { createsRevision } from "../../src/schema/revision-fields.js";
import { ApiError } from "../../src/api/errors.js";
import type { DeploymentCreateRequest } from "../../src/schema/deployment.js";
import { BASE, deployment, fakeClock, KEY, useStrictNock } from "./helpers.js";

useStrictNock();

const make = (extra: Partial<ControlPlaneClientOptions> = {}) =>
  createControlPlaneClient({ apiUrl: BASE, apiKey: KEY, clock: fakeClock(), random: () => 0.5, ...extra });

const createBody: DeploymentCreateRequest = {
  name: "shop",
  source: "external_container",
  source_config: {},
  source_revision_config: { image_uri: "registry.test/shop:1" },
  secrets: [],
};
const reset = () => Object.assign(new Error("socket hang up (simulated)"), { code: "ECONNRESET" });

describe("listing and lookup", () => {
  it("pages by 100 using the returned offset until a short page", async () => {
    const first = Array.from({ length: 100 }, (_, i) => deployment(`d-${i}`));
    const second = [deployment("d-100")];
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0" })
      .reply(200, { resources: first, offset: 100 })
      .get("/v2/deployments")
      .query({ limit: "100", offset: "100" })
      .reply(200, { resources: second, offset: 101 });
    const all = await make().listDeployments();
    expect(all.map((d) => d.name)).toEqual([...first, ...second].map((d) => d.name));
  });

  it("stops with unexpected-response when the server answers the first page again (it ignores offset): the list never ended", async () => {
    const first = Array.from({ length: 100 }, (_, i) => deployment(`d-${i}`));
    nock(BASE).get("/v2/deployments").query(true).times(2).reply(200, { resources: first, offset: 0 });
    const error = await make()
      .listDeployments()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "unexpected-response" });
    expect(String(error)).toContain("the page at offset 100 is the page at offset 0 again");
  });

  it("yields the same deployments a page at a time, asking for the next page only when read", async () => {
    const first = Array.from({ length: 100 }, (_, i) => deployment(`d-${i}`));
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0" })
      .reply(200, { resources: first, offset: 100 });
    const pages = make().deploymentPages()[Symbol.asyncIterator]();
    expect((await pages.next()).value?.map((d: { name: string }) => d.name)).toEqual(
      first.map((d) => d.name),
    );
    expect(nock.isDone()).toBe(true); // the second page is not asked for yet
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "100" })
      .reply(200, { resources: [deployment("d-100")], offset: 101 });
    expect((await pages.next()).value?.map((d: { name: string }) => d.name)).toEqual(["d-100"]);
    expect((await pages.next()).done).toBe(true);
  });

  it("finds the exact name even when the first pages hold only similar names", async () => {
    const similar = (from: number) => Array.from({ length: 2 }, (_, i) => deployment(`shop-${from + i}`));
    const target = deployment("shop");
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "2", offset: "0", name_contains: "shop" })
      .reply(200, { resources: similar(0), offset: 2 })
      .get("/v2/deployments")
      .query({ limit: "2", offset: "2", name_contains: "shop" })
      .reply(200, { resources: [deployment("my-shop"), deployment("Shop")], offset: 4 })
      .get("/v2/deployments")
      .query({ limit: "2", offset: "4", name_contains: "shop" })
      .reply(200, { resources: [target], offset: 5 });
    const found = await make({ pageSize: 2 }).findDeploymentByName("shop");
    expect(found?.id).toBe(target.id);
  });

  it("returns null when no name matches exactly", async () => {
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0", name_contains: "shop" })
      .reply(200, { resources: [deployment("shop-2")], offset: 1 });
    expect(await make().findDeploymentByName("shop")).toBeNull();
  });

  it("gets null for a 404 and checks the shape otherwise", async () => {
    const d = deployment("a");
    nock(BASE)
      .get(`/v2/deployments/${d.id}`)
      .reply(200, d)
      .get("/v2/deployments/missing")
      .reply(404, { detail: "Deployment ID missing not found." })
      .get("/v2/deployments/broken")
      .reply(200, { id: "broken" });
    const client = make();
    expect((await client.getDeployment(d.id))?.name).toBe("a");
    expect(await client.getDeployment("missing")).toBeNull();
    await expect(client.getDeployment("broken")).rejects.toMatchObject({ code: "unexpected-response" });
  });
});

describe("createDeployment", () => {
  const lookup = (resources: unknown[]) =>
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0", name_contains: "shop" })
      .reply(200, { resources, offset: resources.length });

  it("creates once", async () => {
    const created = deployment("shop");
    nock(BASE)
      .post("/v2/deployments", createBody as never)
      .reply(201, created);
    expect((await make().createDeployment(createBody)).id).toBe(created.id);
  });

  it("after a lost response, finds the deployment instead of creating it again", async () => {
    const created = deployment("shop");
    nock(BASE).post("/v2/deployments").replyWithError(reset());
    lookup([deployment("shop-old"), created]);
    expect((await make().createDeployment(createBody)).id).toBe(created.id);
  });

  it("after a 5xx with nothing created, creates again", async () => {
    const created = deployment("shop");
    nock(BASE).post("/v2/deployments").reply(502);
    lookup([]);
    nock(BASE).post("/v2/deployments").reply(201, created);
    const clock = fakeClock();
    expect((await make({ clock }).createDeployment(createBody)).id).toBe(created.id);
    expect(clock.sleeps).toEqual([100]); // backoff before the second POST
  });

  it("treats a 409 after an ambiguous attempt as 'it was created'", async () => {
    const created = deployment("shop");
    nock(BASE).post("/v2/deployments").replyWithError(reset());
    lookup([]); // the first request is still being processed when we look
    nock(BASE).post("/v2/deployments").reply(409, { detail: "name already used" });
    lookup([created]);
    expect((await make().createDeployment(createBody)).id).toBe(created.id);
  });

  it("reports a plain 409 as a conflict", async () => {
    nock(BASE).post("/v2/deployments").reply(409, { detail: "A deployment named shop already exists." });
    await expect(make().createDeployment(createBody)).rejects.toMatchObject({
      code: "conflict",
      status: 409,
    });
  });

  it("gives up after createAttempts ambiguous failures", async () => {
    nock(BASE).post("/v2/deployments").times(2).reply(503);
    lookup([]);
    const error = await make({ createAttempts: 2 })
      .createDeployment(createBody)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
  });

  it("waits out a short outage as the server asks: Retry-After between attempts, 8 attempts by default", async () => {
    // Five 503s with Retry-After: 1 (a restart of about 5 s). With 4 attempts of a jittered backoff
    // under 1.4 s the create failed inside it, where an update (apply's PATCH) waits it out.
    const created = deployment("shop");
    nock(BASE).post("/v2/deployments").times(5).reply(503, {}, { "retry-after": "1" });
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0", name_contains: "shop" })
      .times(5)
      .reply(200, { resources: [], offset: 0 });
    nock(BASE).post("/v2/deployments").reply(201, created);
    const clock = fakeClock();
    expect((await make({ clock }).createDeployment(createBody)).id).toBe(created.id);
    expect(clock.sleeps).toEqual([1000, 1000, 1000, 1000, 1000]);
  });

  it("does not wait past the retry bound for a Retry-After: the last error instead", async () => {
    nock(BASE).post("/v2/deployments").reply(503, {}, { "retry-after": "3600" });
    nock(BASE)
      .get("/v2/deployments")
      .query({ limit: "100", offset: "0", name_contains: "shop" })
      .reply(200, { resources: [], offset: 0 });
    const clock = fakeClock();
    await expect(make({ clock }).createDeployment(createBody)).rejects.toMatchObject({ status: 503 });
    expect(clock.sleeps).toEqual([]);
  });

  it("does not retry a 422", async () => {
    nock(BASE)
      .post("/v2/deployments")
      .reply(422, { detail: [{ loc: ["body", "name"], msg: "bad name", type: "pattern" }] });
    const error = (await make()
      .createDeployment(createBody)
      .catch((e: unknown) => e)) as ApiError;
    expect(error.fieldErrors().map((f) => f.field)).toEqual(["name"]);
  });
});

describe("other endpoints", () => {
  it("patches, deletes, lists revisions and gets a revision", async () => {
    const d = deployment("a");
    const revision = {
      id: "r1",
      status: "DEPLOYED",
      source: "external_container",
      created_at: "t",
      updated_at: "t",
      source_revision_config: {},
      status_message: null,
    };
    nock(BASE)
      .patch(`/v2/deployments/${d.id}`, { secrets: [] })
      .reply(200, d)
      .delete(`/v2/deployments/${d.id}`)
      .reply(204)
      .delete("/v2/deployments/gone")
      .reply(404, { detail: "not found" })
      .get(`/v2/deployments/${d.id}/revisions`)
      .query({ limit: "1", offset: "0" })
      .reply(200, { resources: [revision], offset: 1 })
      .get(`/v2/deployments/${d.id}/revisions/r1`)
      .reply(200, revision);
    const client = make();
    expect((await client.patchDeployment(d.id, { secrets: [] })).id).toBe(d.id);
    expect(await client.deleteDeployment(d.id)).toBe(true);
    expect(await client.deleteDeployment("gone")).toBe(false);
    expect((await client.listRevisions(d.id, { limit: 1 })).resources[0]?.status).toBe("DEPLOYED");
    expect((await client.getRevision(d.id, "r1"))?.id).toBe("r1");
  });

  it("issues an upload URL and uploads with the key only to our own origin", async () => {
    nock(BASE, { reqheaders: { "x-api-key": KEY } })
      .post("/v2/deployments/d1/upload-url")
      .reply(200, { upload_url: "/uploads/abc", object_path: "uploads/abc" });
    nock(BASE, { reqheaders: { "x-api-key": KEY, "content-type": "application/gzip" } })
      .put("/uploads/abc", "gz")
      .reply(200);
    const client = make();
    const { upload_url } = await client.createUploadUrl("d1");
    await client.uploadTarball(upload_url, new TextEncoder().encode("gz"));
  });

  it("names a failed upload without its signed URL's token (path or query)", async () => {
    const token = "tok-3f9a1c0b7d";
    nock(BASE).put(`/uploads/${token}`).query(true).reply(500, "upstream error").persist();
    const error = await make()
      .uploadTarball(`/uploads/${token}?X-Signature=sig-${token}`, new TextEncoder().encode("gz"))
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error).toBeInstanceOf(Error);
    expect(String(error?.message)).toContain("/uploads/");
    expect(JSON.stringify(error) + String(error?.message) + String(error?.stack)).not.toContain(token);
  });

  it("lists listeners (paged) and integrations", async () => {
    nock(BASE)
      .get("/v2/listeners")
      .query({ limit: "100", offset: "0" })
      .reply(200, { resources: [{ id: "l1", compute_type: "k8s", compute_id: "c" }], offset: 1 })
      .get("/v1/integrations/gitrepo/install")
      .reply(200, [{ id: "i1", installation_id: "1", name: "git" }]);
    const client = make();
    expect((await client.listListeners()).map((l) => l.id)).toEqual(["l1"]);
    expect((await client.listIntegrations()).map((i) => i.id)).toEqual(["i1"]);
  });
});

describe("patchDeployment", () => {
  it("retries an in-place PATCH after a reset", async () => {
    const d = deployment("a");
    const body = { source_config: { build_on_push: true } };
    nock(BASE)
      .patch(`/v2/deployments/${d.id}`, body)
      .replyWithError(reset())
      .patch(`/v2/deployments/${d.id}`, body)
      .reply(200, d);
    expect((await make().patchDeployment(d.id, body)).id).toBe(d.id);
  });

  it("sends a revision-creating PATCH once after a reset and reports it ambiguous", async () => {
    const d = deployment("a");
    nock(BASE).patch(`/v2/deployments/${d.id}`).replyWithError(reset());
    const error = (await make()
      .patchDeployment(d.id, { source_revision_config: { image_uri: "img:2" } })
      .catch((e: unknown) => e)) as ApiError;
    expect([error.code, error.ambiguous]).toEqual(["network", true]);
  });

  it("patchDeploymentOnce sends even an in-place PATCH once: a reset is reported ambiguous, a 500 too", async () => {
    const d = deployment("a");
    const body = { source_config: { build_on_push: true } };
    nock(BASE)
      .patch(`/v2/deployments/${d.id}`, body)
      .replyWithError(reset())
      .patch(`/v2/deployments/${d.id}`, body)
      .reply(500, { detail: "boom" });
    const client = make();
    const first = (await client.patchDeploymentOnce(d.id, body).catch((e: unknown) => e)) as ApiError;
    const second = (await client.patchDeploymentOnce(d.id, body).catch((e: unknown) => e)) as ApiError;
    expect([first.code, first.ambiguous, second.code, second.ambiguous]).toEqual([
      "network",
      true,
      "server-error",
      true,
    ]);
  });

  it("patchDeploymentOnce waits out a 429 and sends again (refused before any work)", async () => {
    const d = deployment("a");
    const body = { source_revision_config: { image_uri: "img:2" } };
    nock(BASE)
      .patch(`/v2/deployments/${d.id}`, body)
      .reply(429, { detail: "slow down" }, { "retry-after": "1" })
      .patch(`/v2/deployments/${d.id}`, body)
      .reply(200, d);
    expect((await make().patchDeploymentOnce(d.id, body)).id).toBe(d.id);
  });

  it("knows which bodies create a revision (spec 4.1 rule 1)", () => {
    expect(createsRevision({ source_config: { build_on_push: false, resource_spec: null } })).toBe(false);
    expect(createsRevision({ source_revision_config: { repo_ref: null } })).toBe(false);
    expect(createsRevision({ secret_references: [] })).toBe(false);
    expect(createsRevision({ source_revision_config: { repo_ref: "main" } })).toBe(true);
    expect(createsRevision({ secrets: [] })).toBe(true);
    expect(createsRevision({ source_config: { resource_spec: { cpu: 1 } } })).toBe(true);
  });
});

describe("a base URL that is not the API's", () => {
  it("says the URL looks wrong, and what it should be, when a list answers 404", async () => {
    nock(`${BASE}`).get("/v2/v2/deployments").query(true).reply(404, { detail: "Not Found" });
    const client = createControlPlaneClient({ apiUrl: `${BASE}/v2`, apiKey: KEY, clock: fakeClock() });
    await expect(client.listDeployments()).rejects.toMatchObject({
      code: "api-config",
      message: expect.stringContaining(`looks wrong: GET ${BASE}/v2/v2/deployments answered 404`),
    });
    const cause = new ApiError({
      code: "not-found",
      status: 404,
      method: "GET",
      path: "/v2/deployments",
    });
    expect(wrongApiUrl(`${BASE}/api/v1/`, "/v2/deployments", cause).message).toContain(
      `use the base URL without /api/v1: ${BASE}`,
    );
    expect(wrongApiUrl(`${BASE}/control`, "/v2/deployments", cause).message).toContain(
      "use the control plane's base URL, without a path",
    );
  });
});
