import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY, DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type Api, container, gitrepo, start } from "./helpers.js";

// Hostile HTTP requests against the local control plane (issue 10), each with the status a careful
// service answers. None may answer 5xx, change another tenant's data, or stop later requests from
// working; the server keeps --data so every write also goes through the journal.

const OTHER_KEY = "other-tenant-key";
const OTHER_TENANT = "00000000-0000-4000-8000-0000000000b2";
let api: Api;
let dataDir: string;
let mine = ""; // a deployment of the default tenant
let theirs = ""; // a deployment of the other tenant
let thread = ""; // a thread on `mine`

const nest = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
const json = { "content-type": "application/json" };

type Case = [
  name: string,
  method: string,
  path: () => string,
  body: string | undefined,
  headers: Record<string, string>,
  status: number,
];
const dep =
  (id: () => string, rest = "") =>
  () =>
    `/v2/deployments/${id()}${rest}`;
const agent = (rest: string) => () => `/agents/${mine}${rest}`;
const create = (extra: Record<string, unknown>) => JSON.stringify({ ...container("x"), ...extra });

const cases: Case[] = [
  // Authentication
  ["no key", "GET", () => "/v2/deployments", undefined, { "x-api-key": "" }, 401],
  ["random key", "GET", () => "/v2/deployments", undefined, { "x-api-key": "nope" }, 401],
  ["8 KB random key", "GET", () => "/v2/deployments", undefined, { "x-api-key": "k".repeat(8192) }, 401],
  [
    "key with spaces around",
    "GET",
    () => "/v2/deployments",
    undefined,
    { "x-api-key": ` ${DEFAULT_API_KEY}x ` },
    401,
  ],
  [
    "a wrong Bearer token",
    "GET",
    () => "/v2/deployments",
    undefined,
    { "x-api-key": "", authorization: "Bearer nope" },
    401,
  ],
  [
    "tenant header for a tenant the key cannot reach",
    "GET",
    () => "/v2/deployments",
    undefined,
    { "x-tenant-id": OTHER_TENANT },
    403,
  ],
  [
    "unknown route without key: 401 before 404",
    "GET",
    () => "/v2/secret-admin",
    undefined,
    { "x-api-key": "" },
    401,
  ],
  ["agent server without key", "POST", agent("/threads"), "{}", { ...json, "x-api-key": "" }, 401],
  ["organization without key", "GET", () => "/api/v1/orgs/current/info", undefined, { "x-api-key": "" }, 401],
  // Another tenant's objects are invisible
  ["GET another tenant's deployment", "GET", dep(() => theirs), undefined, {}, 404],
  ["PATCH another tenant's deployment", "PATCH", dep(() => theirs), '{"secrets": []}', json, 404],
  ["DELETE another tenant's deployment", "DELETE", dep(() => theirs), undefined, {}, 404],
  ["revisions of another tenant's deployment", "GET", dep(() => theirs, "/revisions"), undefined, {}, 404],
  ["upload URL for another tenant's deployment", "POST", dep(() => theirs, "/upload-url"), "{}", json, 404],
  ["threads of another tenant's agent", "POST", () => `/agents/${theirs}/threads`, "{}", json, 404],
  ["search another tenant's threads", "POST", () => `/agents/${theirs}/threads/search`, "{}", json, 404],
  // Paths
  ["unknown route", "GET", () => "/v2/nothing-here", undefined, {}, 404],
  ["dot-dot in the path", "GET", () => "/v2/deployments/../../etc/passwd", undefined, {}, 404],
  ["encoded dot-dot", "GET", () => "/v2/deployments/%2e%2e%2f%2e%2e%2fetc%2fpasswd", undefined, {}, 422],
  ["id that is not a UUID", "GET", () => "/v2/deployments/not-a-uuid", undefined, {}, 422],
  ["id with SQL", "GET", () => "/v2/deployments/1'%20OR%20'1'='1", undefined, {}, 422],
  ["id with a NUL", "GET", () => "/v2/deployments/%00", undefined, {}, 422],
  ["very long id", "GET", () => `/v2/deployments/${"a".repeat(4000)}`, undefined, {}, 414],
  [
    "unknown revision",
    "GET",
    dep(() => mine, "/revisions/00000000-0000-4000-8000-000000000000"),
    undefined,
    {},
    404,
  ],
  ["thread that is not a UUID", "GET", agent("/threads/not-a-uuid"), undefined, {}, 404],
  ["unknown thread", "GET", agent("/threads/00000000-0000-4000-8000-000000000000"), undefined, {}, 404],
  [
    "run of an unknown thread",
    "POST",
    agent("/threads/00000000-0000-4000-8000-000000000000/runs"),
    '{"assistant_id":"agent"}',
    json,
    404,
  ],
  [
    "agent of a deployment that does not exist",
    "POST",
    () => "/agents/00000000-0000-4000-8000-000000000000/threads",
    "{}",
    json,
    404,
  ],
  // Query strings
  ["limit negative", "GET", () => "/v2/deployments?limit=-1", undefined, {}, 422],
  ["limit zero", "GET", () => "/v2/deployments?limit=0", undefined, {}, 422],
  ["limit huge", "GET", () => "/v2/deployments?limit=1000000000", undefined, {}, 422],
  ["limit not a number", "GET", () => "/v2/deployments?limit=abc", undefined, {}, 422],
  ["limit fractional", "GET", () => "/v2/deployments?limit=1.5", undefined, {}, 422],
  ["offset negative", "GET", () => "/v2/deployments?offset=-5", undefined, {}, 422],
  ["offset not a number", "GET", () => "/v2/deployments?offset=x", undefined, {}, 422],
  [
    "limit given twice: the last one counts",
    "GET",
    () => "/v2/deployments?limit=1&limit=2",
    undefined,
    {},
    200,
  ],
  [
    "name_contains with regex characters",
    "GET",
    () => "/v2/deployments?name_contains=.*(",
    undefined,
    {},
    200,
  ],
  // PostgreSQL stores no U+0000: 422, as in spec-rules.test.ts (docs/control-plane.md "NUL characters")
  ["name_contains with a NUL", "GET", () => "/v2/deployments?name_contains=%00", undefined, {}, 422],
  ["unknown query parameter", "GET", () => "/v2/deployments?admin=true", undefined, {}, 200],
  ["revisions limit negative", "GET", dep(() => mine, "/revisions?limit=-1"), undefined, {}, 422],
  // Methods
  ["PUT a deployment: 405, a method it does not serve", "PUT", dep(() => mine), "{}", json, 405],
  ["DELETE the collection", "DELETE", () => "/v2/deployments", undefined, {}, 405],
  ["PATCH the collection", "PATCH", () => "/v2/deployments", "{}", json, 405],
  ["POST to a deployment", "POST", dep(() => mine), "{}", json, 405],
  [
    "DELETE a revision",
    "DELETE",
    dep(() => mine, "/revisions/00000000-0000-4000-8000-000000000000"),
    undefined,
    {},
    405,
  ],
  // Bodies: encoding and shape
  ["invalid JSON", "POST", () => "/v2/deployments", "{", json, 422],
  ["trailing garbage after JSON", "POST", () => "/v2/deployments", "{} x", json, 422],
  ["JSON array body", "POST", () => "/v2/deployments", "[]", json, 422],
  ["JSON string body", "POST", () => "/v2/deployments", '"x"', json, 422],
  ["JSON number body", "POST", () => "/v2/deployments", "1", json, 422],
  ["JSON null body", "POST", () => "/v2/deployments", "null", json, 422],
  ["empty body", "POST", () => "/v2/deployments", "", json, 422],
  [
    "text/plain body",
    "POST",
    () => "/v2/deployments",
    create({ name: "plain" }),
    { "content-type": "text/plain" },
    422,
  ],
  [
    "form body",
    "POST",
    () => "/v2/deployments",
    "name=x",
    { "content-type": "application/x-www-form-urlencoded" },
    422,
  ],
  [
    // read as JSON, as FastAPI reads it (validation.test.ts); this one is refused for its field
    "no content type",
    "POST",
    () => "/v2/deployments",
    create({ name: "untyped", untyped: true }),
    { "content-type": "" },
    422,
  ],
  [
    "body over 1 MiB",
    "POST",
    () => "/v2/deployments",
    create({ name: "big", pad: "x".repeat(1_100_000) }),
    json,
    413,
  ],
  [
    "__proto__ key",
    "POST",
    () => "/v2/deployments",
    '{"__proto__": {"admin": true}, "name": "p"}',
    json,
    422,
  ],
  [
    "escaped __proto__ key",
    "POST",
    () => "/v2/deployments",
    '{"\\u005f_proto__": {"admin": true}}',
    json,
    422,
  ],
  [
    "constructor key",
    "POST",
    () => "/v2/deployments",
    create({ name: "ctor", constructor: { prototype: {} } }),
    json,
    422,
  ],
  ["nested 65 levels", "POST", () => "/v2/deployments", nest(65), json, 422],
  ["nested 5,000 levels", "POST", () => "/v2/deployments", nest(5000), json, 422],
  ["object nested 5,000 levels", "PATCH", dep(() => mine), deepObject(5000), json, 422],
  [
    "deep nesting inside a string is fine to parse",
    "POST",
    () => "/v2/deployments",
    create({ name: "brackets", note: "[".repeat(5000) }),
    json,
    422,
  ],
  ["duplicate JSON keys", "POST", () => "/v2/deployments", '{"name": "a", "name": "b"}', json, 422],
  ["lone surrogate in a name", "POST", () => "/v2/deployments", create({ name: "bad\\ud800" }), json, 422],
  // Bodies: values
  ["name with a NUL", "POST", () => "/v2/deployments", create({ name: "a\u0000b" }), json, 422],
  [
    "name of 10,000 characters",
    "POST",
    () => "/v2/deployments",
    create({ name: "a".repeat(10_000) }),
    json,
    422,
  ],
  ["name a number", "POST", () => "/v2/deployments", create({ name: 5 }), json, 422],
  ["name an object", "POST", () => "/v2/deployments", create({ name: { $gt: "" } }), json, 422],
  ["unknown source", "POST", () => "/v2/deployments", create({ name: "src", source: "ftp" }), json, 422],
  ["source null", "POST", () => "/v2/deployments", create({ name: "srcnull", source: null }), json, 422],
  ["secrets not a list", "POST", () => "/v2/deployments", create({ name: "sec", secrets: "all" }), json, 422],
  [
    "10,000 secrets within the body limit",
    "POST",
    () => "/v2/deployments",
    create({
      name: "many",
      secrets: Array.from({ length: 10_000 }, (_, i) => ({ name: `S${i}`, value: "v" })),
    }),
    json,
    201,
  ],
  [
    "secret without a value",
    "POST",
    () => "/v2/deployments",
    create({ name: "nov", secrets: [{ name: "A" }] }),
    json,
    422,
  ],
  [
    "image_uri a list",
    "POST",
    () => "/v2/deployments",
    create({ name: "img", source_revision_config: { image_uri: ["a"] } }),
    json,
    422,
  ],
  [
    "resource_spec cpu a string",
    "POST",
    () => "/v2/deployments",
    create({
      name: "cpu",
      source_config: { ...container("x").source_config, resource_spec: { cpu: "500m" } },
    }),
    json,
    422,
  ],
  [
    "resource_spec cpu 1e308",
    "POST",
    () => "/v2/deployments",
    create({
      name: "cpubig",
      source_config: { ...container("x").source_config, resource_spec: { cpu: 1e308 } },
    }),
    json,
    422,
  ],
  [
    "listener_id not a UUID",
    "POST",
    () => "/v2/deployments",
    create({ name: "lis", source_config: { listener_id: "x" } }),
    json,
    422,
  ],
  [
    "gitrepo in a self-hosted field",
    "POST",
    () => "/v2/deployments",
    JSON.stringify({
      ...gitrepo("gr"),
      source_config: { ...gitrepo("gr").source_config, listener_id: "00000000-0000-4000-8000-000000000000" },
    }),
    json,
    400,
  ],
  ["PATCH changing the source", "PATCH", dep(() => mine), '{"source": "gitrepo"}', json, 400],
  ["PATCH renaming", "PATCH", dep(() => mine), '{"name": "renamed"}', json, 400],
  ["PATCH with secrets of wrong shape", "PATCH", dep(() => mine), '{"secrets": [1, 2]}', json, 422],
  ["PATCH with an unknown field", "PATCH", dep(() => mine), '{"owner": "me"}', json, 422],
  ["create with a taken name", "POST", () => "/v2/deployments", create({ name: "mine" }), json, 409],
  // Agent server
  [
    "thread with metadata nested 5,000 deep",
    "POST",
    agent("/threads"),
    `{"metadata": ${deepObject(5000)}}`,
    json,
    422,
  ],
  ["thread with metadata a list", "POST", agent("/threads"), '{"metadata": [1]}', json, 422],
  ["thread id not a UUID", "POST", agent("/threads"), '{"thread_id": "../../x"}', json, 422],
  ["thread if_exists unknown", "POST", agent("/threads"), '{"if_exists": "explode"}', json, 422],
  [
    "search with a deep filter",
    "POST",
    agent("/threads/search"),
    `{"metadata": ${deepObject(3000)}}`,
    json,
    422,
  ],
  ["search limit negative", "POST", agent("/threads/search"), '{"limit": -1}', json, 422],
  ["search limit a string", "POST", agent("/threads/search"), '{"limit": "all"}', json, 422],
  ["search status unknown", "POST", agent("/threads/search"), '{"status": "hacked"}', json, 422],
  [
    "run with input nested 5,000 deep",
    "POST",
    agent(`/threads/${"{thread}"}/runs`),
    `{"assistant_id": "agent", "input": ${nest(5000)}}`,
    json,
    422,
  ],
  [
    "run with an unknown assistant",
    "POST",
    agent(`/threads/${"{thread}"}/runs`),
    '{"assistant_id": "../../etc"}',
    json,
    404,
  ],
  ["run without assistant", "POST", agent(`/threads/${"{thread}"}/runs`), "{}", json, 422],
  [
    "run with multitask strategy unknown",
    "POST",
    agent(`/threads/${"{thread}"}/runs`),
    '{"assistant_id": "agent", "multitask_strategy": "yolo"}',
    json,
    422,
  ],
  [
    "run with metadata nested deep",
    "POST",
    agent(`/threads/${"{thread}"}/runs`),
    `{"assistant_id": "agent", "metadata": ${deepObject(70)}}`,
    json,
    422,
  ],
  [
    "join an unknown run",
    "GET",
    agent(`/threads/${"{thread}"}/runs/00000000-0000-4000-8000-000000000000/join`),
    undefined,
    {},
    404,
  ],
  [
    "cancel an unknown run",
    "POST",
    agent(`/threads/${"{thread}"}/runs/00000000-0000-4000-8000-000000000000/cancel`),
    undefined,
    {},
    404,
  ],
  [
    "state of an unknown thread",
    "GET",
    agent("/threads/00000000-0000-4000-8000-000000000000/state"),
    undefined,
    {},
    404,
  ],
  // Organization
  [
    "organization PATCH with a wrong type",
    "PATCH",
    () => "/api/v1/orgs/current/info",
    '{"invites_enabled": "yes"}',
    json,
    422,
  ],
  [
    "organization PATCH with an unknown field",
    "PATCH",
    () => "/api/v1/orgs/current/info",
    '{"owner": "me"}',
    json,
    422,
  ],
  ["organization PATCH nested deep", "PATCH", () => "/api/v1/orgs/current/info", deepObject(100), json, 422],
  [
    "SSO settings with a wrong type",
    "PATCH",
    () => "/api/v1/orgs/current/sso-settings",
    '{"enabled": 1}',
    json,
    422,
  ],
  [
    "invite with a bad email",
    "POST",
    () => "/api/v1/orgs/current/invites",
    '{"email": "not-an-email"}',
    json,
    422,
  ],
  [
    "delete an unknown invite",
    "DELETE",
    () => "/api/v1/orgs/current/invites/00000000-0000-4000-8000-000000000000",
    undefined,
    {},
    404,
  ],
  ["unknown organization route", "GET", () => "/api/v1/orgs/current/billing", undefined, {}, 404],
];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "plumb-hostile-http-"));
  api = await start({
    dataDir,
    mode: "self-hosted",
    apiKeys: [
      { key: DEFAULT_API_KEY, tenants: [DEFAULT_TENANT_ID] },
      { key: OTHER_KEY, tenants: [OTHER_TENANT] },
    ],
  });
  mine = (await api.call("POST", "/v2/deployments", container("mine"))).body.id as string;
  theirs = (await api.call("POST", "/v2/deployments", container("theirs"), { "x-api-key": OTHER_KEY })).body
    .id as string;
  thread = (await api.call("POST", `/agents/${mine}/threads`, {})).body.thread_id as string;
});
afterAll(async () => {
  await api?.cp.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("hostile HTTP requests", () => {
  it("holds at least 100 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
  });

  it.each(cases)("%s", async (_name, method, path, body, headers, status) => {
    const answer = await api.call(method, path().replace("{thread}", thread), body, headers);
    expect(answer.status).toBe(status);
  });

  it("leaves both tenants' data as it was and keeps serving", async () => {
    const listed = (key: string) =>
      api.call("GET", "/v2/deployments?limit=100", undefined, { "x-api-key": key });
    expect(
      ((await listed(DEFAULT_API_KEY)).body.resources as Array<{ name: string }>).map((d) => d.name),
    ).toEqual(["mine", "many"]);
    expect(((await listed(OTHER_KEY)).body.resources as Array<{ name: string }>).map((d) => d.name)).toEqual([
      "theirs",
    ]);
    expect((await api.call("GET", `/v2/deployments/${mine}/revisions`)).body.resources).toHaveLength(1);
    expect((await api.call("POST", "/v2/deployments", container("after"))).status).toBe(201);
  });
});
