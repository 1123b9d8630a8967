import nock from "nock";
import { describe, expect, it } from "vitest";
import { createAgentServerClient } from "../../src/api/agent-server-client.js";
import { createControlPlaneClient } from "../../src/api/control-plane-client.js";
import { ApiError } from "../../src/api/errors.js";
import { createSecretRedactor } from "../../src/api/secret-redactor.js";
import { BASE, deployment, fakeClock, KEY, useStrictNock } from "./helpers.js";

// Server text passes the run's redactor before it becomes an ApiError (message and detail) or a
// revision's status_message: a server that echoes the request body leaks nothing through plumb.

useStrictNock();

const SECRET = 'sk-live-0123456789"abc/+= é';
const ECHO = `bad: {"value":${JSON.stringify(SECRET)}} b64 ${Buffer.from(`x${SECRET}`).toString("base64")}`;

const make = () =>
  createControlPlaneClient({
    apiUrl: BASE,
    apiKey: KEY,
    clock: fakeClock(),
    random: () => 0.5,
    retry: { maxAttempts: 1 },
    redactor: createSecretRedactor([SECRET]),
  });

async function failure(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const leaks = (error: ApiError) =>
  [error.message, JSON.stringify(error.detail)].some(
    (text) => text.includes("sk-live") || text.includes("c2stbGl2ZS0w") || text.includes(KEY),
  );

describe("error bodies that echo the request", () => {
  it("redacts a 400 detail string, a 422 issue list (dropping FastAPI's input) and a text body", async () => {
    const d = deployment("a");
    nock(BASE)
      .patch(`/v2/deployments/${d.id}`)
      .reply(400, { detail: `${ECHO} key ${KEY}` })
      .patch(`/v2/deployments/${d.id}`)
      .reply(422, {
        detail: [{ loc: ["body", "secrets", SECRET], msg: ECHO, type: "value_error", input: SECRET }],
      })
      .patch(`/v2/deployments/${d.id}`)
      .reply(400, `<html>${ECHO.slice(0, 30)}`, { "content-type": "text/html" });
    const client = make();
    const body = { secrets: [{ name: "S", value: SECRET }] };
    const errors = [
      await failure(client.patchDeploymentOnce(d.id, body)),
      await failure(client.patchDeploymentOnce(d.id, body)),
      await failure(client.patchDeploymentOnce(d.id, body)),
    ];
    for (const error of errors) {
      expect(leaks(error), error.message).toBe(false);
      expect(error.message).toContain("[redacted]");
    }
    expect(errors[1]!.detail).toEqual([
      { loc: ["body", "secrets", "[redacted]"], msg: expect.any(String) as string, type: "value_error" },
    ]);
  });

  it("redacts a revision's status_message, read alone or listed", async () => {
    const d = deployment("a");
    const revision = {
      id: "r1",
      status: "BUILD_FAILED",
      source: "external_container",
      created_at: "t",
      updated_at: "t",
      source_revision_config: {},
      status_message: ECHO,
    };
    nock(BASE)
      .get(`/v2/deployments/${d.id}/revisions/r1`)
      .reply(200, revision)
      .get(`/v2/deployments/${d.id}/revisions`)
      .query(true)
      .reply(200, { resources: [revision], offset: 1 });
    const client = make();
    const one = await client.getRevision(d.id, "r1");
    const listed = (await client.listRevisions(d.id)).resources[0];
    for (const r of [one, listed]) {
      expect(r?.status_message).toContain("[redacted]");
      expect(r?.status_message).not.toContain("sk-live");
    }
  });

  it("redacts what an agent server answers, and a body that is not JSON is not quoted", async () => {
    nock(BASE)
      .get("/threads/t1")
      .reply(500, { detail: ECHO })
      .get("/threads/t2")
      .reply(200, `not json ${SECRET}`);
    const agent = createAgentServerClient({
      deploymentUrl: BASE,
      apiKey: KEY,
      clock: fakeClock(),
      random: () => 0.5,
      retry: { maxAttempts: 1 },
      redactor: createSecretRedactor([SECRET]),
    });
    const errors = [await failure(agent.getThread("t1")), await failure(agent.getThread("t2"))];
    for (const error of errors) {
      expect(leaks(error)).toBe(false);
      expect(JSON.stringify(error.cause ?? null)).not.toContain("sk-live");
      expect(String((error.cause as Error | undefined)?.message)).not.toContain("sk-live");
    }
  });
});
