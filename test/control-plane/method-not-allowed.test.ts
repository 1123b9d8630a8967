import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, container, start } from "./helpers.js";

// A known path with a method it does not serve: 405 with Allow, as FastAPI answers (spec 2.6 shows
// its error bodies; spec 7 "Errors" is silent; docs/control-plane.md "Validation and errors").
// Unknown paths stay 404, and both come after authentication.

let api: Api;
let id = "";
beforeAll(async () => {
  api = await start({ mode: "self-hosted" });
  id = (await api.call("POST", "/v2/deployments", container("allow"))).body.id as string;
});
afterAll(async () => api.cp.stop());

const rev = "00000000-0000-4000-8000-000000000001";
const cases: Array<[method: string, path: () => string, allow: string]> = [
  ["PUT", () => `/v2/deployments/${id}`, "DELETE, GET, PATCH"],
  ["POST", () => `/v2/deployments/${id}`, "DELETE, GET, PATCH"],
  ["DELETE", () => "/v2/deployments", "GET, POST"],
  ["PATCH", () => "/v2/deployments", "GET, POST"],
  ["POST", () => `/v2/deployments/${id}/revisions`, "GET"],
  ["DELETE", () => `/v2/deployments/${id}/revisions/${rev}`, "GET"],
  ["GET", () => `/v2/deployments/${id}/upload-url`, "POST"],
  ["PATCH", () => "/v2/listeners", "GET"],
  ["POST", () => "/v1/integrations/gitrepo/install", "GET"],
  // FastAPI serves no HEAD beside a GET (its APIRoute serves the methods it names); fastify did
  ["HEAD", () => `/v2/deployments/${id}`, "DELETE, GET, PATCH"],
  ["HEAD", () => "/v2/deployments", "GET, POST"],
  ["HEAD", () => `/v2/deployments/${id}/revisions`, "GET"],
  ["HEAD", () => "/v2/listeners", "GET"],
  ["HEAD", () => "/api/v1/sessions", "GET"],
  ["OPTIONS", () => `/v2/deployments/${id}`, "DELETE, GET, PATCH"],
  ["PUT", () => "/api/v1/orgs/current/info", "GET, HEAD, PATCH"],
  ["DELETE", () => "/api/v1/organizations/current/info", "GET, HEAD, PATCH"],
  ["PUT", () => `/agents/${id}/threads`, "POST"],
  // A path several patterns match allows every method one of them serves, as each such request is
  // routed there (GET /threads/search is /threads/{thread_id}'s, a 404): Allow listed "POST" alone
  ["PUT", () => `/agents/${id}/threads/search`, "DELETE, GET, HEAD, PATCH, POST"],
  ["PUT", () => `/agents/${id}/assistants/search`, "DELETE, GET, HEAD, PATCH, POST"],
  ["PUT", () => `/agents/${id}/threads/${rev}`, "DELETE, GET, HEAD, PATCH"],
];

describe("405 Method Not Allowed on a known path", () => {
  it.each(cases)("%s %s", async (method, path, allow) => {
    const bodyless = method === "GET" || method === "HEAD";
    const answer = await api.call(method, path(), bodyless ? undefined : {});
    expect(answer.status).toBe(405);
    // A HEAD answer has no body
    if (method !== "HEAD") expect(answer.body).toEqual({ detail: "Method Not Allowed" });
    expect(answer.headers.get("allow")).toBe(allow);
  });

  it("still answers 404 for an unknown path, and 401 before either", async () => {
    expect((await api.call("PUT", "/v2/nothing-here", {})).status).toBe(404);
    expect((await api.call("GET", "/v2/deployments/x/y/z")).status).toBe(404);
    const anonymous = await api.call("PUT", `/v2/deployments/${id}`, {}, { "x-api-key": "" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("allow")).toBeNull();
  });

  // RFC 9110 15.5.6: Allow lists the methods the target resource supports. Here that is exactly
  // the methods not answered 405 at that path: it listed only the most specific pattern's, so a
  // client told "Allow: POST" at /threads/{tid}/runs/crons was served GET and DELETE there.
  it("lists in Allow exactly the methods not answered 405 at the path", async () => {
    const thread = (await api.call("POST", `/agents/${id}/threads`, {})).body.thread_id as string;
    const paths = [
      `/agents/${id}/threads/${thread}/runs/crons`,
      `/agents/${id}/threads/${thread}/state/checkpoint`,
      `/agents/${id}/runs/crons/search`,
      `/agents/${id}/threads/search`,
      `/agents/${id}/store/items`,
      "/v2/deployments", // POST {} is a 422: nothing here changes what the other cases use
    ];
    const methods = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];
    for (const path of paths) {
      const answers = await Promise.all(
        methods.map(async (method) => {
          const bodyless = method === "GET" || method === "HEAD";
          return [method, await api.call(method, path, bodyless ? undefined : {})] as const;
        }),
      );
      const allow = answers.find(([, a]) => a.status === 405)?.[1].headers.get("allow");
      const served = answers.filter(([, a]) => a.status !== 405).map(([m]) => m);
      expect({ path, allow }).toEqual({ path, allow: served.join(", ") });
    }
  });

  it("serves the methods it names in Allow; the agent server serves HEAD beside GET, as Starlette", async () => {
    expect((await api.call("GET", `/v2/deployments/${id}`)).status).toBe(200);
    const thread = (await api.call("POST", `/agents/${id}/threads`, {})).body.thread_id as string;
    expect((await api.call("HEAD", `/agents/${id}/threads/${thread}`)).status).toBe(200);
    expect((await api.call("HEAD", "/info")).status).toBe(200);
  });
});
