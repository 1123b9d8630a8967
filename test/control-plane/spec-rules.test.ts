import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_INTEGRATION_ID, DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import { type Api, container, gitrepo, start } from "./helpers.js";

// One row per rule of the spec (control-plane.md) or, where it says "not shown", of decisions.md,
// each naming its section: the status the local control plane must answer, and for 4xx the shape
// of the body (spec 2.6 / 7 "Errors": 400 and 404 {"detail": string}, 422 HTTPValidationError).

let saas: Api;
let self: Api;
let git = ""; // a gitrepo deployment (SaaS)
let gitRevision = ""; // its first revision
let tagged = ""; // a gitrepo deployment on a tag
let box = ""; // an external_container deployment (self-hosted)
beforeAll(async () => {
  saas = await start();
  self = await start({ mode: "self-hosted" });
  const created = (await saas.call("POST", "/v2/deployments", gitrepo("git"))).body;
  git = created.id;
  gitRevision = created.latest_revision_id;
  const tag = gitrepo("tagged", {
    source_revision_config: { repo_ref: "refs/tags/v1", graph_config_path: "langgraph.json" },
  });
  tagged = (await saas.call("POST", "/v2/deployments", tag)).body.id;
  box = (await self.call("POST", "/v2/deployments", container("box"))).body.id;
});
afterAll(async () => {
  await saas.cp.stop();
  await self.cp.stop();
});

type Row = [rule: string, api: () => Api, method: string, path: () => string, body: unknown, status: number];
const on = (d: () => string) => () => `/v2/deployments/${d()}`;
const create = () => "/v2/deployments";
const rs = (spec: Record<string, unknown>) => ({ source_config: { resource_spec: spec } });
const named = (name: unknown) => ({ ...container("x"), name });

const rows: Row[] = [
  // decisions.md "Deployments": names 1..63, a letter first, letters, digits and '-'
  ["name: one letter", () => self, "POST", create, named("a"), 201],
  ["name: 63 characters", () => self, "POST", create, named(`a${"b".repeat(62)}`), 201],
  ["name: 64 characters", () => self, "POST", create, named(`a${"b".repeat(63)}`), 422],
  ["name: empty", () => self, "POST", create, named(""), 422],
  ["name: a digit first", () => self, "POST", create, named("1abc"), 422],
  ["name: an underscore", () => self, "POST", create, named("a_b"), 422],
  ["name: a dot", () => self, "POST", create, named("a.b"), 422],
  ["name: not a string", () => self, "POST", create, named(7), 422],
  ["name: already used in the tenant", () => self, "POST", create, named("box"), 409],
  // decisions.md "Deployments": required body fields
  [
    "create without secrets",
    () => self,
    "POST",
    create,
    { ...container("nosecrets"), secrets: undefined },
    422,
  ],
  [
    "create with source outside the enum",
    () => self,
    "POST",
    create,
    { ...container("y"), source: "docker" },
    422,
  ],
  // spec 2.4 / 8.1: CPU bounds on the value as sent
  ["cpu 0.1", () => self, "PATCH", on(() => box), rs({ cpu: 0.1 }), 200],
  ["cpu 8", () => self, "PATCH", on(() => box), rs({ cpu: 8 }), 200],
  [
    "cpu 0.09 (rounds to 0.1, but bounds are on the value as sent)",
    () => self,
    "PATCH",
    on(() => box),
    rs({ cpu: 0.09 }),
    422,
  ],
  ["cpu 8.01", () => self, "PATCH", on(() => box), rs({ cpu: 8.01 }), 422],
  ["cpu_limit 16", () => self, "PATCH", on(() => box), rs({ cpu_limit: 16 }), 200],
  ["cpu_limit 16.04", () => self, "PATCH", on(() => box), rs({ cpu_limit: 16.04 }), 422],
  ["queue_cpu 0", () => self, "PATCH", on(() => box), rs({ queue_cpu: 0 }), 422],
  ["redis_cpu_limit 17", () => self, "PATCH", on(() => box), rs({ redis_cpu_limit: 17 }), 422],
  ["cpu as a string", () => self, "PATCH", on(() => box), rs({ cpu: "1" }), 422],
  ["memory_mb fractional", () => self, "PATCH", on(() => box), rs({ memory_mb: 1.5 }), 422],
  ["labels: a value that is not a string", () => self, "PATCH", on(() => box), rs({ labels: { a: 1 } }), 422],
  // spec 2.4 nested shapes
  [
    "volume name not a DNS label",
    () => self,
    "PATCH",
    on(() => box),
    rs({ volumes: [{ name: "Data" }] }),
    422,
  ],
  [
    "mount of an undeclared volume",
    () => self,
    "PATCH",
    on(() => box),
    rs({ volume_mounts: [{ name: "v", mountPath: "/v" }] }),
    422,
  ],
  ["container without image", () => self, "PATCH", on(() => box), rs({ sidecars: [{ name: "s" }] }), 422],
  [
    "imagePullPolicy outside the enum",
    () => self,
    "PATCH",
    on(() => box),
    rs({ sidecars: [{ name: "s", image: "i", imagePullPolicy: "Sometimes" }] }),
    422,
  ],
  [
    "env name not a C identifier",
    () => self,
    "PATCH",
    on(() => box),
    rs({ init_containers: [{ name: "i", image: "i", env: [{ name: "1X" }] }] }),
    422,
  ],
  [
    "env valueFrom with a value",
    () => self,
    "PATCH",
    on(() => box),
    rs({ init_containers: [{ name: "i", image: "i", env: [{ name: "X", value: "v", valueFrom: {} }] }] }),
    422,
  ],
  [
    "env valueFrom with an empty value",
    () => self,
    "PATCH",
    on(() => box),
    rs({ init_containers: [{ name: "i", image: "i", env: [{ name: "X", value: "", valueFrom: {} }] }] }),
    200,
  ],
  // a pod's containers, init containers included, share one namespace of names (Kubernetes
  // refuses the pod): a sidecar named as an init container was taken and deployed
  [
    "a sidecar named as an init container",
    () => self,
    "PATCH",
    on(() => box),
    rs({ init_containers: [{ name: "c", image: "i" }], sidecars: [{ name: "c", image: "i" }] }),
    422,
  ],
  [
    "restartPolicy outside the enum",
    () => self,
    "PATCH",
    on(() => box),
    rs({ sidecars: [{ name: "s", image: "i", restartPolicy: "Never" }] }),
    422,
  ],
  // spec 2.5: Secret and SecretReference
  ["secret without value", () => self, "PATCH", on(() => box), { secrets: [{ name: "A" }] }, 422],
  [
    "secret reference without secret_key",
    () => self,
    "PATCH",
    on(() => box),
    { secret_references: [{ name: "A", secret_name: "s" }] },
    422,
  ],
  [
    "secret references on gitrepo",
    () => saas,
    "PATCH",
    on(() => git),
    { secret_references: [{ name: "A", secret_name: "s", secret_key: "k" }] },
    400,
  ],
  // spec 2.1 and 4.1: secret_references is an "array of SecretReference or null"; an empty one
  // references nothing, so it is no field of external_container's alone
  ["secret_references [] on gitrepo", () => saas, "PATCH", on(() => git), { secret_references: [] }, 200],
  [
    "secret_references [] on external_container",
    () => self,
    "PATCH",
    on(() => box),
    { secret_references: [] },
    200,
  ],
  [
    "create gitrepo with secret_references []",
    () => saas,
    "POST",
    create,
    { ...gitrepo("norefs"), secret_references: [] },
    201,
  ],
  // spec 2.5: a reference's name is the environment variable it fills, as a secret's is
  [
    "secret reference names twice",
    () => self,
    "PATCH",
    on(() => box),
    {
      secret_references: [
        { name: "A", secret_name: "s", secret_key: "k" },
        { name: "A", secret_name: "s", secret_key: "k2" },
      ],
    },
    422,
  ],
  [
    "a secret and a secret reference of one name",
    () => self,
    "PATCH",
    on(() => box),
    {
      secrets: [{ name: "B", value: "x" }],
      secret_references: [{ name: "B", secret_name: "s", secret_key: "k" }],
    },
    422,
  ],
  // spec 4.1 rule 2 and decisions.md "Patch semantics": unchangeable fields
  [
    "repo_url unchanged",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { repo_url: "https://git.example.com/acme/agent" } },
    200,
  ],
  [
    "repo_url changed",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { repo_url: "https://git.example.com/acme/other" } },
    400,
  ],
  [
    "integration_id changed",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { integration_id: DEFAULT_LISTENER_ID } },
    400,
  ],
  [
    "integration_id unchanged",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { integration_id: DEFAULT_INTEGRATION_ID } },
    200,
  ],
  [
    "deployment_type changed",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { deployment_type: "prod" } },
    400,
  ],
  [
    "deployment_type outside the enum",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { deployment_type: "staging" } },
    422,
  ],
  ["name changed", () => saas, "PATCH", on(() => git), { name: "other" }, 400],
  ["name unchanged", () => saas, "PATCH", on(() => git), { name: "git" }, 200],
  ["source changed", () => saas, "PATCH", on(() => git), { source: "internal_source" }, 400],
  [
    "listener_id changed",
    () => self,
    "PATCH",
    on(() => box),
    { source_config: { listener_id: "10000000-0000-4000-8000-000000000002" } },
    400,
  ],
  [
    "k8s_namespace changed",
    () => self,
    "PATCH",
    on(() => box),
    { source_config: { listener_config: { k8s_namespace: "other" } } },
    400,
  ],
  [
    "custom_url of gitrepo (read-only)",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { custom_url: "https://mine.example" } },
    400,
  ],
  // spec 4.1 rule 3 and decisions.md: build_on_push with a tag
  [
    "build_on_push true with a tag in the same body",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "refs/tags/v2" } },
    422,
  ],
  [
    "build_on_push true while the stored ref is a tag",
    () => saas,
    "PATCH",
    on(() => tagged),
    { source_config: { build_on_push: true } },
    400,
  ],
  [
    "build_on_push false on a tag",
    () => saas,
    "PATCH",
    on(() => tagged),
    { source_config: { build_on_push: false } },
    200,
  ],
  // spec 2.2/2.3 "Only for": fields of another source
  [
    "repo_ref on external_container",
    () => self,
    "PATCH",
    on(() => box),
    { source_revision_config: { repo_ref: "main" } },
    400,
  ],
  [
    "image_uri on gitrepo",
    () => saas,
    "PATCH",
    on(() => git),
    { source_revision_config: { image_uri: "i:1" } },
    400,
  ],
  ["resource_spec on gitrepo", () => saas, "PATCH", on(() => git), rs({ cpu: 1 }), 400],
  [
    "source_tarball_path never issued",
    () => saas,
    "PATCH",
    on(() => git),
    { revision_source: "internal_source", source_revision_config: { source_tarball_path: "uploads/x.tgz" } },
    400,
  ],
  [
    "revision_source outside the enum",
    () => saas,
    "PATCH",
    on(() => git),
    { revision_source: "external_container" },
    422,
  ],
  // decisions.md "Patch semantics": null or absent leaves unchanged; a body is required
  ["an empty object", () => saas, "PATCH", on(() => git), {}, 200],
  [
    "every field null",
    () => saas,
    "PATCH",
    on(() => git),
    {
      revision_source: null,
      source_config: null,
      source_revision_config: null,
      secrets: null,
      secret_references: null,
    },
    200,
  ],
  ["no body", () => saas, "PATCH", on(() => git), undefined, 422],
  ["a body that is an array", () => saas, "PATCH", on(() => git), [], 422],
  ["a body that is null", () => saas, "PATCH", on(() => git), "null", 422],
  ["an unknown field", () => saas, "PATCH", on(() => git), { replicas: 3 }, 422],
  // spec 7 "Errors" and decisions.md: unknown ids
  [
    "PATCH an unknown id",
    () => saas,
    "PATCH",
    () => "/v2/deployments/00000000-0000-4000-8000-00000000dead",
    {},
    404,
  ],
  ["PATCH a non-uuid id", () => saas, "PATCH", () => "/v2/deployments/dead", {}, 422],
  // FastAPI validates the whole body, its model's cross-field rules too, before the handler looks
  // the id up: an invalid body is 422 whether or not the id exists
  [
    "PATCH an unknown id with build_on_push true and a tag",
    () => saas,
    "PATCH",
    () => "/v2/deployments/00000000-0000-4000-8000-00000000dead",
    { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "refs/tags/v2" } },
    422,
  ],
  // spec 4.1 "Path parameter: deployment_id, string, uuid": the spellings a typed uuid parameter
  // reads (FastAPI's, pydantic's parse: 32 hex digits, braces, urn:uuid:), and no others
  [
    "GET an id of 32 hex digits",
    () => saas,
    "GET",
    () => `/v2/deployments/${git.replaceAll("-", "")}`,
    undefined,
    200,
  ],
  ["PATCH an id in braces", () => saas, "PATCH", () => `/v2/deployments/{${git}}`, {}, 200],
  ["GET an id as urn:uuid:", () => saas, "GET", () => `/v2/deployments/urn:uuid:${git}`, undefined, 200],
  [
    "GET a revision id of 32 hex digits",
    () => saas,
    "GET",
    () => `/v2/deployments/${git}/revisions/${gitRevision.replaceAll("-", "")}`,
    undefined,
    200,
  ],
  [
    "GET an id with a hyphen misplaced",
    () => saas,
    "GET",
    () => `/v2/deployments/${git.replaceAll("-", "").replace(/^(.{4})/, "$1-")}`,
    undefined,
    422,
  ],
  [
    "GET an id of 31 hex digits",
    () => saas,
    "GET",
    () => `/v2/deployments/${git.replaceAll("-", "").slice(1)}`,
    undefined,
    422,
  ],
  // The ids of a body are pydantic UUIDs as the path ids are (docs/control-plane.md "Ids"): the
  // same spellings, and the stored id compares equal whichever spelling a PATCH sends
  ...[
    ["32 hex digits", DEFAULT_INTEGRATION_ID.replaceAll("-", "")],
    ["in braces", `{${DEFAULT_INTEGRATION_ID}}`],
    ["as urn:uuid:", `urn:uuid:${DEFAULT_INTEGRATION_ID}`],
    ["in upper case", DEFAULT_INTEGRATION_ID.toUpperCase()],
  ].map(([spelling, value]): Row => [
    `integration_id unchanged, ${spelling}`,
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { integration_id: value } },
    200,
  ]),
  [
    "integration_id of 31 hex digits",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { integration_id: DEFAULT_INTEGRATION_ID.replaceAll("-", "").slice(1) } },
    422,
  ],
  [
    "integration_id as URN:uuid: (the prefix is lower case only)",
    () => saas,
    "PATCH",
    on(() => git),
    { source_config: { integration_id: `URN:uuid:${DEFAULT_INTEGRATION_ID}` } },
    422,
  ],
  [
    "listener_id unchanged, 32 hex digits in braces (not a spelling)",
    () => self,
    "PATCH",
    on(() => box),
    { source_config: { listener_id: `{${DEFAULT_LISTENER_ID.replaceAll("-", "")}}` } },
    422,
  ],
  // PostgreSQL stores no U+0000 (docs/control-plane.md "NUL characters"): 422 naming the field
  [
    "a NUL in a secret value",
    () => self,
    "POST",
    create,
    { ...container("nul"), secrets: [{ name: "A", value: "a\u0000b" }] },
    422,
  ],
  ["a NUL in a label's key", () => self, "PATCH", on(() => box), rs({ labels: { "a\u0000": "x" } }), 422],
  ["a NUL in name_contains", () => saas, "GET", () => "/v2/deployments?name_contains=a%00", undefined, 422],
  [
    "a NUL in a thread's metadata",
    () => saas,
    "POST",
    () => `/agents/${git}/threads`,
    { metadata: { note: "\u0000" } },
    422,
  ],
  [
    "GET an unknown revision",
    () => saas,
    "GET",
    () => `/v2/deployments/${git}/revisions/00000000-0000-4000-8000-00000000dead`,
    undefined,
    404,
  ],
  ["GET a non-uuid revision", () => saas, "GET", () => `/v2/deployments/${git}/revisions/x`, undefined, 422],
  [
    "DELETE an unknown id",
    () => saas,
    "DELETE",
    () => "/v2/deployments/00000000-0000-4000-8000-00000000dead",
    undefined,
    404,
  ],
  // decisions.md "Deployments": list paging
  ["list limit 100", () => saas, "GET", () => "/v2/deployments?limit=100", undefined, 200],
  ["list limit 101", () => saas, "GET", () => "/v2/deployments?limit=101", undefined, 422],
  ["revisions limit 0", () => saas, "GET", () => `/v2/deployments/${git}/revisions?limit=0`, undefined, 422],
  ["listeners offset -1", () => saas, "GET", () => "/v2/listeners?offset=-1", undefined, 422],
  // FastAPI's int query parameters (pydantic's lax str → int): a sign, an all-zero fraction, and
  // Python's underscores are read; any other fraction or notation is 422 int_parsing
  ["list limit +5", () => saas, "GET", () => "/v2/deployments?limit=%2B5", undefined, 200],
  ["list limit 5.0", () => saas, "GET", () => "/v2/deployments?limit=5.0", undefined, 200],
  ["list limit 1_0", () => saas, "GET", () => "/v2/deployments?limit=1_0", undefined, 200],
  ["list limit 5.5", () => saas, "GET", () => "/v2/deployments?limit=5.5", undefined, 422],
  ["list limit 1e1", () => saas, "GET", () => "/v2/deployments?limit=1e1", undefined, 422],
  ["list limit 1__0", () => saas, "GET", () => "/v2/deployments?limit=1__0", undefined, 422],
  [
    "revisions offset -0",
    () => saas,
    "GET",
    () => `/v2/deployments/${git}/revisions?offset=-0`,
    undefined,
    200,
  ],
  // decisions.md "Organization access": PATCH takes either or both booleans; unknown fields → 422
  [
    "org PATCH one boolean",
    () => saas,
    "PATCH",
    () => "/api/v1/organizations/current/info",
    { invites_enabled: true },
    200,
  ],
  [
    "org PATCH an unknown field",
    () => saas,
    "PATCH",
    () => "/api/v1/orgs/current/info",
    { sso_login_slug: "x" },
    422,
  ],
  [
    "org PATCH a string for a boolean",
    () => saas,
    "PATCH",
    () => "/api/v1/orgs/current/info",
    { jit_provisioning_enabled: "true" },
    422,
  ],
  ["org PATCH null", () => saas, "PATCH", () => "/api/v1/orgs/current/info", { invites_enabled: null }, 422],
  // decisions.md "Agent server"
  ["thread from {}", () => saas, "POST", () => `/agents/${git}/threads`, {}, 200],
  ["thread with metadata", () => saas, "POST", () => `/agents/${git}/threads`, { metadata: { a: 1 } }, 200],
  [
    "agent of an unknown deployment",
    () => saas,
    "POST",
    () => "/agents/00000000-0000-4000-8000-00000000dead/threads",
    {},
    404,
  ],
];

describe("spec rules, one row each", () => {
  it.each(rows)("%s", async (_rule, api, method, path, body, status) => {
    const answer = await api().call(method, path(), body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    if (status === 422) {
      expect(Array.isArray(answer.body.detail)).toBe(true);
      for (const issue of answer.body.detail) {
        expect(Array.isArray(issue.loc)).toBe(true);
        expect(typeof issue.msg).toBe("string");
        expect(typeof issue.type).toBe("string");
      }
    } else if (status >= 400) {
      expect(typeof answer.body.detail).toBe("string");
    }
  });
});

// FastAPI validates a request's path, query and body together and lists every issue in one 422,
// path first (docs/control-plane.md "Validation and errors"); each used to stop at the first.
describe("every issue of a request in one answer", () => {
  const locs = (answer: { body: { detail: Array<{ loc: unknown[] }> } }) =>
    answer.body.detail.map((i) => i.loc);
  it.each([
    [
      "PATCH",
      "/v2/deployments/dead",
      { replicas: 3 },
      [
        ["path", "deployment_id"],
        ["body", "replicas"],
      ],
    ],
    [
      "PATCH",
      "/v2/deployments/dead",
      { source_config: { build_on_push: true }, source_revision_config: { repo_ref: "refs/tags/v1" } },
      [
        ["path", "deployment_id"],
        ["body", "source_config", "build_on_push"],
      ],
    ],
    [
      "GET",
      "/v2/deployments/dead/revisions?limit=0&offset=-1",
      undefined,
      [
        ["path", "deployment_id"],
        ["query", "limit"],
        ["query", "offset"],
      ],
    ],
    [
      "GET",
      "/v2/deployments/dead/revisions/beef",
      undefined,
      [
        ["path", "deployment_id"],
        ["path", "revision_id"],
      ],
    ],
    [
      "GET",
      "/v2/deployments?limit=x&offset=y",
      undefined,
      [
        ["query", "limit"],
        ["query", "offset"],
      ],
    ],
  ])("%s %s", async (method, path, body, expected) => {
    const answer = await saas.call(method, path, body);
    expect(answer.status).toBe(422);
    expect(locs(answer)).toEqual(expected);
  });
});

// decisions.md "Authentication": X-Api-Key or Authorization: Bearer; 401 {"detail": "Invalid token"}.
describe("authentication headers", () => {
  it.each([
    ["X-Api-Key", { "x-api-key": "plumb-local-key" }, 200],
    ["Bearer", { "x-api-key": "", authorization: "Bearer plumb-local-key" }, 200],
    [
      "bearer in lower case (RFC 7235: the scheme is case-insensitive)",
      { "x-api-key": "", authorization: "bearer plumb-local-key" },
      200,
    ],
    ["Basic", { "x-api-key": "", authorization: "Basic cGx1bWI6a2V5" }, 401],
    ["Bearer with no token", { "x-api-key": "", authorization: "Bearer" }, 401],
    [
      "a wrong X-Api-Key beside a right Bearer: the X-Api-Key counts",
      { "x-api-key": "wrong", authorization: "Bearer plumb-local-key" },
      401,
    ],
    ["X-Tenant-Id of the key's own tenant", { "x-tenant-id": "00000000-0000-4000-8000-000000000000" }, 200],
    [
      "X-Tenant-Id of the key's own tenant as 32 hex digits",
      { "x-tenant-id": "00000000000040008000000000000000" },
      200,
    ],
    ["X-Tenant-Id of another tenant", { "x-tenant-id": "00000000-0000-4000-8000-0000000000ff" }, 403],
  ])("%s → %i", async (_name, headers, status) => {
    const answer = await saas.call("GET", "/v2/deployments", undefined, headers);
    expect(answer.status).toBe(status);
    if (status === 401) expect(answer.body).toEqual({ detail: "Invalid token" });
  });
});

// A deployment id is a UUID (spec 4.1: "string, uuid"), which is case-insensitive: the deployment
// routes found an upper-case id, but the agent server at /agents/{id} answered 404 for it.
describe("a deployment id in upper case", () => {
  it("reaches the same deployment and the same agent server", async () => {
    const upper = git.toUpperCase();
    expect((await saas.call("GET", `/v2/deployments/${upper}`)).body.id).toBe(git);
    const thread = await saas.call("POST", `/agents/${upper}/threads`, {});
    expect(thread.status).toBe(200);
    const again = await saas.call("GET", `/agents/${git}/threads/${thread.body.thread_id}`);
    expect(again.status).toBe(200);
    const listed = await saas.call("POST", `/agents/${upper}/threads/search`, { limit: 100 });
    const ids = (listed.body as Array<{ thread_id: string }>).map((t) => t.thread_id);
    expect(ids).toContain(thread.body.thread_id);
  });
});

// The other spellings of a UUID reach the same deployment, answered with its canonical id, and the
// same agent server; a NUL refused is not stored.
describe("a deployment id spelled otherwise, a NUL refused", () => {
  it("answers the canonical id for 32 hex digits, braces and urn:uuid:", async () => {
    for (const spelling of [git.replaceAll("-", ""), `{${git.toUpperCase()}}`, `urn:uuid:${git}`]) {
      expect((await saas.call("GET", `/v2/deployments/${spelling}`)).body.id).toBe(git);
      const thread = await saas.call("POST", `/agents/${spelling}/threads`, {});
      expect(thread.status).toBe(200);
      expect((await saas.call("GET", `/agents/${git}/threads/${thread.body.thread_id}`)).status).toBe(200);
    }
  });

  it("stores and answers a body's ids in their canonical form, however they were spelled", async () => {
    // A listener id with hex letters, so that its case shows
    const listener = "abcdef12-3456-4789-8abc-def012345678";
    const plane = await start({
      mode: "self-hosted",
      listeners: [{ id: listener, compute_type: "k8s", compute_id: "c" }],
    });
    try {
      const created = await plane.call("POST", "/v2/deployments", {
        ...container("spelled"),
        source_config: { listener_id: `{${listener.toUpperCase()}}` },
      });
      expect(created.status).toBe(201);
      expect(created.body.source_config.listener_id).toBe(listener);
      for (const spelling of [listener.toUpperCase(), `urn:uuid:${listener}`, listener.replaceAll("-", "")]) {
        const again = await plane.call("PATCH", `/v2/deployments/${created.body.id}`, {
          source_config: { listener_id: spelling },
        });
        expect(again.status, JSON.stringify(again.body)).toBe(200);
        expect(again.body.source_config.listener_id).toBe(listener);
      }
    } finally {
      await plane.cp.stop();
    }
    const wrong = await saas.call("PATCH", `/v2/deployments/${git}`, {
      source_config: { integration_id: "not-a-uuid" },
    });
    expect(wrong.body.detail).toEqual([
      {
        loc: ["body", "source_config", "integration_id"],
        msg: "Input should be a valid UUID",
        type: "uuid_parsing",
      },
    ]);
  });

  it("names the field that holds U+0000 and stores nothing", async () => {
    const body = {
      ...container("nulstored"),
      secrets: [
        { name: "A", value: "ok" },
        { name: "B", value: "\u0000" },
      ],
    };
    const answer = await self.call("POST", "/v2/deployments", body);
    expect(answer.status).toBe(422);
    expect(answer.body.detail[0].loc).toEqual(["body", "secrets", 1, "value"]);
    const listed = await self.call("GET", "/v2/deployments?name_contains=nulstored");
    expect(listed.body.resources).toEqual([]);
  });
});
