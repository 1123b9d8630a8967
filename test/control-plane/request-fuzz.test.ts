import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, container, start } from "./helpers.js";

// Fuzzing the request validators over real HTTP (issue 10): any JSON body, or a valid body with
// random values swapped in, on every write route gets an answer below 500 (a 4xx names what is
// wrong), and the server keeps answering.

let api: Api;
let deployment = "";
let thread = "";
beforeAll(async () => {
  // The rate limit is out of the way: this is about validation, not budgets.
  api = await start({
    mode: "self-hosted",
    rateLimits: { "Default (API key)": { count: 1e9, intervalSeconds: 10 } },
  });
  deployment = (await api.call("POST", "/v2/deployments", container("fuzz-target"))).body.id as string;
  thread = (await api.call("POST", `/agents/${deployment}/threads`, {})).body.thread_id as string;
});
afterAll(() => api?.cp.stop());

const routes: Array<[string, () => string]> = [
  ["POST", () => "/v2/deployments"],
  ["POST", () => "/v1/integrations/gitrepo/push"],
  ["PATCH", () => `/v2/deployments/${deployment}`],
  ["POST", () => `/agents/${deployment}/threads`],
  ["POST", () => `/agents/${deployment}/threads/search`],
  ["POST", () => `/agents/${deployment}/threads/${thread}/runs`],
  ["PATCH", () => "/api/v1/orgs/current/info"],
  ["PATCH", () => "/api/v1/orgs/current/sso-settings"],
  ["POST", () => "/api/v1/orgs/current/invites"],
];
const route = fc.constantFrom(...routes);

/** A valid create body with one field replaced by an arbitrary JSON value. */
const skewed = fc
  .record({
    field: fc.constantFrom(
      "name",
      "source",
      "source_config",
      "source_revision_config",
      "secrets",
      "secret_references",
    ),
    value: fc.jsonValue({ maxDepth: 4 }),
  })
  .map(({ field, value }) => ({ ...container("skewed"), [field]: value }));

const answered = async ([method, path]: [string, () => string], body: unknown) => {
  const answer = await api.call(method, path(), JSON.stringify(body));
  expect(answer.status, `${method} ${path()} ${JSON.stringify(body).slice(0, 200)}`).toBeLessThan(500);
  if (answer.status >= 400 && answer.status !== 404 && answer.status !== 409)
    expect(answer.body).toHaveProperty("detail");
};

describe("request validator fuzz", () => {
  it("any JSON body on any write route: never 5xx", async () => {
    await fc.assert(fc.asyncProperty(route, fc.jsonValue({ maxDepth: 5 }), answered), { numRuns: 300 });
  });

  it("valid create bodies with one field skewed: never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(skewed, (body) => answered(routes[0]!, body)),
      { numRuns: 200 },
    );
  });

  it("still serves afterwards", async () => {
    expect((await api.call("GET", `/v2/deployments/${deployment}`)).status).toBe(200);
  });
});
