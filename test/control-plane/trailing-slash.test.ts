import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type Api, container, ManualClock, start } from "./helpers.js";

// A path with trailing slashes that no route serves, but that a route serves without them: 307 to
// it, as FastAPI answers by default (Starlette's redirect_slashes), after authentication as every
// unknown route (docs/control-plane.md "Validation and errors"), except where the route it leads to
// needs no key (`/info/`: 307 without one, 34b5add). `/v2/deployments/` answered 422 (an empty
// deployment_id) and `/v2/deployments/{id}/` 404.

let api: Api;
let id = "";
let revision = "";
beforeAll(async () => {
  api = await start({ mode: "self-hosted" });
  const created = (await api.call("POST", "/v2/deployments", container("slash"))).body;
  id = created.id as string;
  revision = created.latest_revision_id as string;
});
afterAll(async () => api.cp.stop());

/** The answer itself, not the one a redirect leads to. */
async function raw(method: string, path: string, key = DEFAULT_API_KEY, body?: unknown) {
  const init: RequestInit = { method, redirect: "manual", headers: { "x-api-key": key } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const response = await fetch(`${api.cp.url}${path}`, init);
  return { status: response.status, location: response.headers.get("location"), text: await response.text() };
}

describe("a trailing slash", () => {
  it.each([
    ["GET", () => "/v2/deployments/", () => "/v2/deployments"],
    ["GET", () => "/v2/deployments/?limit=1&offset=0", () => "/v2/deployments?limit=1&offset=0"],
    ["POST", () => "/v2/deployments//", () => "/v2/deployments"],
    ["GET", () => `/v2/deployments/${id}/`, () => `/v2/deployments/${id}`],
    ["PATCH", () => `/v2/deployments/${id}/`, () => `/v2/deployments/${id}`],
    ["GET", () => `/v2/deployments/${id}/revisions/`, () => `/v2/deployments/${id}/revisions`],
    [
      "GET",
      () => `/v2/deployments/${id}/revisions/${revision}/`,
      () => `/v2/deployments/${id}/revisions/${revision}`,
    ],
    ["GET", () => "/v2/listeners/", () => "/v2/listeners"],
    ["POST", () => `/agents/${id}/threads/`, () => `/agents/${id}/threads`],
    // Starlette redirects whatever the method; the method is judged at the target (405 there)
    ["PUT", () => `/v2/deployments/${id}/`, () => `/v2/deployments/${id}`],
  ])("%s %s → 307 to the path without it", async (method, path, target) => {
    const answer = await raw(method, path(), DEFAULT_API_KEY, method === "GET" ? undefined : {});
    expect(answer.status).toBe(307);
    expect(answer.location).toBe(`${api.cp.url}${target()}`);
    expect(answer.text).toBe("");
  });

  it("is followed to the same answer as the path without it", async () => {
    const followed = await api.call("GET", `/v2/deployments/${id}/`);
    expect(followed.status).toBe(200);
    expect(followed.body.id).toBe(id);
    expect((await api.call("GET", "/v2/deployments/?limit=1")).body.resources).toHaveLength(1);
  });

  it("leads to the address the request came to when it sent no Host header (HTTP/1.0)", async () => {
    const { hostname, port } = new URL(api.cp.url);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write(`GET /v2/listeners/ HTTP/1.0\r\nX-Api-Key: ${DEFAULT_API_KEY}\r\n\r\n`),
      );
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(head).toMatch(/^HTTP\/1\.[01] 307/);
    expect(head).toMatch(new RegExp(`\r\nlocation: ${api.cp.url}/v2/listeners\r\n`, "i"));
  });

  it("is 401 without a key, and 404 where no route serves the path without it either", async () => {
    expect((await raw("GET", `/v2/deployments/${id}/`, "wrong")).status).toBe(401);
    expect((await raw("GET", "/v2/nothing/")).status).toBe(404);
    expect((await raw("GET", "/")).status).toBe(404);
    expect((await raw("GET", `/v2/deployments/${id}/x/`)).status).toBe(404);
  });

  it("needs no key before /info, as /info needs none, and counts under spec 8.2's /info row", async () => {
    // It answered 401 without a key (an unknown route is authenticated), and counted under the
    // catch-all row (100 / 60 s per address) instead of /info's (High throughput, per address)
    for (const [method, path] of [
      ["GET", "/info/"],
      ["HEAD", "/info/"],
      ["GET", "/info//?probe=1"],
    ] as const) {
      const answer = await raw(method, path, "");
      expect(answer.status).toBe(307);
      expect(answer.location).toBe(`${api.cp.url}/info${path.includes("?") ? "?probe=1" : ""}`);
    }
    // What /info does not serve is judged as before: PUT /info needs a key (401), then 405
    expect((await raw("PUT", "/info/", "")).status).toBe(401);
    const limited = await start({
      clock: new ManualClock(),
      rateLimits: { "High throughput": { count: 2, intervalSeconds: 10 } },
    });
    try {
      const get = (path: string) => fetch(`${limited.cp.url}${path}`, { redirect: "manual" });
      expect((await get("/info/")).status).toBe(307);
      expect((await get("/info")).status).toBe(200);
      expect((await get("/info/")).status).toBe(429); // the same window as /info's
    } finally {
      await limited.cp.stop();
    }
  });
});
