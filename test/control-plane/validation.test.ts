import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type Api, gitrepo, start } from "./helpers.js";

let api: Api;
beforeAll(async () => {
  api = await start({ bodyLimit: 4096 });
});
afterAll(async () => api.cp.stop());

const locs = (detail: Array<{ loc: unknown[] }>) => detail.map((d) => d.loc.join("."));

describe("422 HTTPValidationError", () => {
  it("lists every offending field with loc, msg and type", async () => {
    const body = {
      name: "1bad_name",
      source: "svn",
      source_config: {
        resource_spec: {
          cpu: 9,
          cpu_limit: 0.05,
          memory_mb: "lots",
          sidecars: [
            { name: "Side", image: "x", env: [{ name: "A", value: "v", valueFrom: { secretKeyRef: {} } }] },
          ],
          volume_mounts: [{ name: "missing", mountPath: "/m" }],
        },
      },
      source_revision_config: { repo_ref: 5 },
      secrets: [
        { name: "X", value: "1" },
        { name: "X", value: "2" },
      ],
      surprise: true,
    };
    const r = await api.call("POST", "/v2/deployments", body);
    expect(r.status).toBe(422);
    for (const issue of r.body.detail) expect(Object.keys(issue).sort()).toEqual(["loc", "msg", "type"]);
    expect(locs(r.body.detail).sort()).toEqual(
      [
        "body.name",
        "body.source",
        "body.source_config.resource_spec.cpu",
        "body.source_config.resource_spec.cpu_limit",
        "body.source_config.resource_spec.memory_mb",
        "body.source_config.resource_spec.sidecars.0.name",
        "body.source_config.resource_spec.sidecars.0.env.0.valueFrom",
        "body.source_config.resource_spec.volume_mounts.0.name",
        "body.source_revision_config.repo_ref",
        "body.secrets.1.name",
        "body.surprise",
      ].sort(),
    );
    const byLoc = Object.fromEntries(
      r.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join("."), d.type]),
    );
    expect(byLoc).toMatchObject({
      "body.surprise": "extra_forbidden",
      "body.source": "literal_error",
      "body.source_config.resource_spec.cpu": "less_than_equal",
      "body.source_config.resource_spec.cpu_limit": "greater_than_equal",
      "body.source_config.resource_spec.memory_mb": "int_type",
      "body.source_revision_config.repo_ref": "string_type",
    });
  });

  it("reports missing required fields and a wrong body type", async () => {
    const r = await api.call("POST", "/v2/deployments", { name: "x" });
    expect(locs(r.body.detail).sort()).toEqual([
      "body.secrets",
      "body.source",
      "body.source_config",
      "body.source_revision_config",
    ]);
    expect(r.body.detail[0]).toMatchObject({ msg: "Field required", type: "missing" });
    const d = (await api.call("POST", "/v2/deployments", gitrepo("v1"))).body;
    // FastAPI's answers for a body that is not an object, and for none (or null), as the platform
    // API's routes here give them: they were dict_type "Input should be a valid dictionary or object"
    const notObject = {
      loc: ["body"],
      msg: "Input should be a valid dictionary or object to extract fields from",
      type: "model_attributes_type",
    };
    const missing = { loc: ["body"], msg: "Field required", type: "missing" };
    for (const [method, path] of [
      ["PATCH", `/v2/deployments/${d.id}`],
      ["POST", "/v2/deployments"],
      ["PATCH", "/api/v1/orgs/current/info"],
    ]) {
      for (const [body, issue] of [
        [[1], notObject],
        ['"x"', notObject],
        ["", missing],
        ["null", missing],
      ] as const)
        expect(
          await api.call(method as string, path as string, body),
          `${method} ${path} ${String(body)}`,
        ).toMatchObject({
          status: 422,
          body: { detail: [issue] },
        });
    }
  });

  it("answers 422 for malformed JSON or another content type, 413 for a large body", async () => {
    const bad = await api.call("POST", "/v2/deployments", "{not json");
    expect(bad).toMatchObject({ status: 422, body: { detail: [{ loc: ["body"], type: "json_invalid" }] } });
    const text = await api.call("POST", "/v2/deployments", "name=x", { "content-type": "text/plain" });
    expect(text).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ["body"], type: "model_attributes_type" }] },
    });
    const big = await api.call("POST", "/v2/deployments", { ...gitrepo("big"), pad: "x".repeat(5000) });
    expect(big.status).toBe(413);
    expect(typeof big.body.detail).toBe("string");
  });

  // FastAPI (spec 2.6's bodies are its) reads a body without a Content-Type, or with an empty one
  // or an application/*+json one, as JSON; another type is handed to the model as text, which
  // refuses it (422, request-bodies.test.ts). A script that posts
  // json.dumps(...) with Python's requests sends none: it was a 415 here, a 201 on the service.
  // pydantic's two answers for a value that is no object: a model's field (source_config) is
  // model_attributes_type, a map's (labels) dict_type "Input should be a valid dictionary", as the
  // agent server's routes word it; both were dict_type "Input should be a valid dictionary or object"
  it("tells a model that is not an object from a map that is not one", async () => {
    const body = {
      ...gitrepo("kinds"),
      source_config: { resource_spec: { labels: [], volumes: [{ name: "v", emptyDir: 1 }] } },
      source_revision_config: [],
    };
    const answer = await api.call("POST", "/v2/deployments", body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual(
      expect.arrayContaining([
        {
          loc: ["body", "source_revision_config"],
          msg: "Input should be a valid dictionary or object to extract fields from",
          type: "model_attributes_type",
        },
        {
          loc: ["body", "source_config", "resource_spec", "labels"],
          msg: "Input should be a valid dictionary",
          type: "dict_type",
        },
        {
          loc: ["body", "source_config", "resource_spec", "volumes", 0, "emptyDir"],
          msg: "Input should be a valid dictionary",
          type: "dict_type",
        },
      ]),
    );
  });

  it("reads a body without a content type, or of an application/*+json type, as JSON", async () => {
    const send = async (name: string, type?: string) => {
      const headers: Record<string, string> = { "x-api-key": DEFAULT_API_KEY };
      if (type !== undefined) headers["content-type"] = type;
      // bytes: fetch adds no Content-Type of its own, as it does for a string
      const body = Buffer.from(JSON.stringify(gitrepo(name)));
      const response = await fetch(`${api.cp.url}/v2/deployments`, { method: "POST", headers, body });
      return { status: response.status, body: (await response.json()) as { name?: string } };
    };
    expect(await send("untyped")).toMatchObject({ status: 201, body: { name: "untyped" } });
    expect(await send("blank", "")).toMatchObject({ status: 201, body: { name: "blank" } });
    const suffixed = await send("suffixed", "application/merge-patch+json; charset=utf-8");
    expect(suffixed).toMatchObject({ status: 201, body: { name: "suffixed" } });
    expect((await send("plain", "text/plain")).status).toBe(422);
    expect((await send("form", "application/x-www-form-urlencoded")).status).toBe(422);
    expect((await send("jsonish", "application/jsonx")).status).toBe(422);
  });

  it("refuses a __proto__ key however it is spelled, and parses escapes elsewhere", async () => {
    for (const key of ["__proto__", "\\u005f_proto__", "__pr\\u006fto__"]) {
      const text = `{"name":"p","source":"gitrepo","${key}":{"polluted":true}}`;
      const r = await api.call("POST", "/v2/deployments", text);
      expect(r, key).toMatchObject({
        status: 422,
        body: { detail: [{ loc: ["body"], type: "json_invalid" }] },
      });
      expect(r.body.detail[0].msg).toContain("__proto__");
    }
    const escaped = JSON.stringify(gitrepo("esc")).replace('"esc"', '"\\u0065sc"');
    const created = await api.call("POST", "/v2/deployments", escaped);
    expect(created).toMatchObject({ status: 201, body: { name: "esc" } });
  });

  it("answers 404 with a detail for unknown routes", async () => {
    expect(await api.call("GET", "/v2/nothing")).toMatchObject({
      status: 404,
      body: { detail: "Not Found" },
    });
  });
});
