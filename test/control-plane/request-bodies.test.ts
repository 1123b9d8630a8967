import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { rawRequest } from "../support/raw-http.js";
import { type Api, gitrepo, start } from "./helpers.js";

// Which bodies are read, as a FastAPI service behind uvicorn reads them (docs/control-plane.md
// "Validation and errors"): `Expect: 100-continue` is answered 100 only once the request is
// admitted; a control plane route reads any content type and its model refuses one that is not
// JSON (422, not 415); a route that takes no body never reads one.

let api: Api;
beforeAll(async () => {
  api = await start({ bodyLimit: 4096 });
});
afterAll(async () => api.cp.stop());

const MISSING_ID = "00000000-0000-4000-8000-0000000000aa";
const NOT_A_MODEL = {
  loc: ["body"],
  msg: "Input should be a valid dictionary or object to extract fields from",
  type: "model_attributes_type",
};

/** The first status line the server sends for `head` (a 100 Continue counts), and the socket. */
async function firstAnswer(head: string) {
  const request = rawRequest(api.cp.url, head);
  const answer = await request.answer;
  return { request, status: answer.status, headers: answer.headers };
}
const post = (path: string, headers: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}`;
const key = `X-Api-Key: ${DEFAULT_API_KEY}\r\n`;
const expectJson = (length: number) =>
  `Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n`;

describe("Expect: 100-continue", () => {
  it.each([
    ["no key", post("/v2/deployments", expectJson(100)), 401],
    ["a wrong key", post("/v2/deployments", `X-Api-Key: wrong\r\n${expectJson(100)}`), 401],
    ["a body declared over the limit", post("/v2/deployments", `${key}${expectJson(10_000)}`), 413],
    ["an unknown path", post("/v2/nothing", `${key}${expectJson(100)}`), 404],
    [
      "the agent server and text/plain",
      post(
        `/agents/${MISSING_ID}/threads`,
        `${key}Expect: 100-continue\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n`,
      ),
      415,
    ],
  ])("refuses %s without a 100 Continue, and closes", async (_name, head, status) => {
    const { request, status: first, headers } = await firstAnswer(head);
    expect(first).toBe(status);
    expect(headers.connection).toBe("close");
    request.socket.destroy();
  });

  it("answers a GET that declares a body without asking for it", async () => {
    const head = `GET /v2/listeners HTTP/1.1\r\nHost: 127.0.0.1\r\n${key}${expectJson(100)}`;
    const { request, status, headers } = await firstAnswer(head);
    expect(status).toBe(200);
    expect(headers.connection).toBe("close");
    request.socket.destroy();
  });

  it("answers 100 Continue to an admitted request, then serves its body", async () => {
    const body = JSON.stringify(gitrepo("continued"));
    const { request, status } = await firstAnswer(
      post("/v2/deployments", `${key}${expectJson(body.length)}`),
    );
    expect(status).toBe(100);
    request.socket.write(body);
    await request.received(/HTTP\/1\.1 201 Created[^]*"name":"continued"/);
    request.socket.destroy();
  });
});

describe("a body that is not JSON", () => {
  it.each(["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "application/xml"])(
    "%s on a control plane route is 422 model_attributes_type, as pydantic refuses bytes",
    async (type) => {
      const answer = await api.call("POST", "/v2/deployments", JSON.stringify(gitrepo("plain")), {
        "content-type": type,
      });
      expect(answer).toMatchObject({ status: 422, body: { detail: [NOT_A_MODEL] } });
      const org = await api.call("PATCH", "/api/v1/orgs/current/info", '{"invites_enabled": true}', {
        "content-type": type,
      });
      expect(org).toMatchObject({ status: 422, body: { detail: [NOT_A_MODEL] } });
    },
  );

  it("an empty text/plain body is a missing body", async () => {
    const answer = await api.call("POST", "/v2/deployments", "", { "content-type": "text/plain" });
    expect(answer).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ["body"], msg: "Field required", type: "missing" }] },
    });
  });

  it("a JSON body of only whitespace is malformed JSON, not a missing body", async () => {
    const answer = await api.call("POST", "/v2/deployments", "  \n ");
    expect(answer).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ["body"], type: "json_invalid" }] },
    });
  });

  it("is 415 on the agent server, unread", async () => {
    const created = await api.call("POST", "/v2/deployments", gitrepo("agent-host"));
    const answer = await api.call("POST", `/agents/${created.body.id}/threads`, "{}", {
      "content-type": "text/plain",
    });
    expect(answer.status).toBe(415);
    expect(typeof answer.body.detail).toBe("string");
  });
});

describe("a route that takes no body", () => {
  it("ignores whatever body is sent, as FastAPI never reads it", async () => {
    const created = await api.call("POST", "/v2/deployments", gitrepo("no-body", { source: "gitrepo" }));
    const id = created.body.id as string;
    const bad = { "content-type": "application/json" };
    expect((await api.call("POST", `/v2/deployments/${id}/upload-url`, "{bad", bad)).status).toBe(200);
    const text = { "content-type": "text/plain" };
    expect((await api.call("POST", `/deployments/${id}/upload-url`, "x", text)).status).toBe(200);
    expect((await api.call("POST", "/v2/nothing", "{bad", bad)).status).toBe(404);
    expect((await api.call("PUT", "/v2/listeners", "{bad", bad)).status).toBe(405);
    expect((await api.call("DELETE", `/api/v1/orgs/current/invites/${MISSING_ID}`, "{bad", bad)).status).toBe(
      404,
    );
    expect((await api.call("DELETE", `/v2/deployments/${id}`, "{bad", bad)).status).toBe(204);
  });
});
