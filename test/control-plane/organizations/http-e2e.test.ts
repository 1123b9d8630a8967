import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../src/control-plane/server.js";

// The real control plane over real HTTP: organization access, and both modules' state across a
// restart with --data.
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "plumb-org-e2e-"));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

const start = () =>
  startControlPlane({ dataDir, runSeconds: 0, revisionSeconds: 0, deploymentReadySeconds: 0 });

async function call(cp: RunningControlPlane, method: string, path: string, body?: unknown) {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${DEFAULT_API_KEY}` } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { ...init.headers, "content-type": "application/json" };
  }
  const response = await fetch(cp.url + path, init);
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

describe("organization access over HTTP, and state across a restart", () => {
  it("serves the settings and the sign-in flow, and keeps everything after a restart", async () => {
    const cp = await start();
    const org = "/api/v1/organizations/current";
    const info = await call(cp, "PATCH", `${org}/info`, { jit_provisioning_enabled: false });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ jit_provisioning_enabled: false, invites_enabled: true });
    // The organization itself, under both prefixes (real tooling reads GET /api/v1/orgs/current).
    for (const path of ["/api/v1/orgs/current", org]) {
      const current = await call(cp, "GET", path);
      expect(current.status, path).toBe(200);
      expect(current.body).toEqual(info.body);
    }
    const invalid = await call(cp, "PATCH", "/api/v1/orgs/current/info", { invites_enabled: "no", extra: 1 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail).toHaveLength(2);
    expect((await call(cp, "PATCH", `${org}/info`, "{not json")).status).toBe(422);
    expect(
      (
        await call(cp, "POST", `${org}/invites`, {
          email: "ann@x.io",
          workspaces: [{ workspace: "ml", role: "Editor" }],
        })
      ).status,
    ).toBe(201);
    expect((await call(cp, "POST", `${org}/sso/sign-in`, { email: "ann@x.io" })).body).toMatchObject({
      via: "invite",
    });
    const denied = await call(cp, "POST", `${org}/sso/sign-in`, { email: "bob@x.io" });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain("invite");
    await call(cp, "POST", `${org}/invites`, { email: "cy@x.io" });

    // A thread with a finished run on a deployment's agent server.
    const deployment = await call(cp, "POST", "/v2/deployments", {
      name: "restart-agent",
      source: "gitrepo",
      source_config: {
        integration_id: DEFAULT_INTEGRATION_ID,
        repo_url: "https://git.example.com/a/b",
        deployment_type: "dev",
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [],
    });
    const agents = `/agents/${deployment.body.id}`;
    const thread = await call(cp, "POST", `${agents}/threads`, {});
    const run = await call(cp, "POST", `${agents}/threads/${thread.body.thread_id}/runs`, {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "ping" }] },
    });
    await call(cp, "GET", `${agents}/threads/${thread.body.thread_id}/runs/${run.body.run_id}/join`);
    await cp.stop();

    const again = await start();
    try {
      expect((await call(again, "GET", `${org}/info`)).body).toEqual(info.body);
      expect(
        (await call(again, "GET", `${org}/members`)).body.map((m: { email: string }) => m.email),
      ).toEqual(["ann@x.io"]);
      expect(
        (await call(again, "GET", `${org}/invites`)).body.map((i: { email: string }) => i.email),
      ).toEqual(["cy@x.io"]);
      const state = await call(again, "GET", `${agents}/threads/${thread.body.thread_id}/state`);
      expect(state.body.values.messages.map((m: { content: string }) => m.content)).toEqual(["ping", "pong"]);
      expect(
        (await call(again, "GET", `${agents}/threads/${thread.body.thread_id}/runs/${run.body.run_id}`)).body
          .status,
      ).toBe("success");
    } finally {
      await again.stop();
    }
  });
});
