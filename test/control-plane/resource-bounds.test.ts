import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import { type Api, container, start } from "./helpers.js";

// Spec 2.4 bounds the CPU fields (spec-rules.test.ts); spec 8.3 leaves the scale, memory and
// database fields without bounds, and neither spec nor decisions.md relates a request to its limit
// or a minimum to its maximum. docs/control-plane.md "Validation and errors" says what this server
// does there, as a careful FastAPI service in front of Kubernetes would: a negative value is 422
// (pydantic's ge=0; Kubernetes takes no negative quantity or replica count), zero is taken, and a
// request above its limit or a minimum above its maximum is taken but its revision fails at deploy.

let self: Api;
let id = "";
beforeAll(async () => {
  self = await start({ mode: "self-hosted" });
  id = (await self.call("POST", "/v2/deployments", container("bounds"))).body.id as string;
});
afterAll(async () => self.cp.stop());

const patch = (spec: Record<string, unknown>) =>
  self.call("PATCH", `/v2/deployments/${id}`, { source_config: { resource_spec: spec } });
type RevisionView = { id: string; status: string; status_message: string | null };
const latest = async (): Promise<RevisionView> =>
  (await self.call("GET", `/v2/deployments/${id}/revisions?limit=1`)).body.resources[0] as RevisionView;

describe("resource_spec values the spec gives no bounds", () => {
  it.each([
    "min_scale",
    "max_scale",
    "memory_mb",
    "memory_limit_mb",
    "queue_min_scale",
    "queue_memory_limit_mb",
    "redis_memory_mb",
    "db_memory_mb",
    "db_storage_gi",
    "db_max_connections",
    "orchestrator_memory_mb",
    "orchestrator_max_scale",
  ])("%s below zero is 422 naming it", async (field) => {
    const answer = await patch({ [field]: -1 });
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      {
        loc: ["body", "source_config", "resource_spec", field],
        msg: "Input should be greater than or equal to 0",
        type: "greater_than_equal",
      },
    ]);
  });

  it("refuses a negative database CPU, and every negative field of one body at once, storing nothing", async () => {
    const before = await latest();
    const answer = await patch({ db_cpu: -0.5, db_cpu_limit: -1, memory_mb: -512 });
    expect(answer.status).toBe(422);
    expect(answer.body.detail.map((issue: { loc: string[] }) => issue.loc.at(-1)).sort()).toEqual([
      "db_cpu",
      "db_cpu_limit",
      "memory_mb",
    ]);
    const created = await self.call("POST", "/v2/deployments", {
      ...container("negative"),
      source_config: { listener_id: DEFAULT_LISTENER_ID, resource_spec: { max_scale: -2 } },
    });
    expect(created.status).toBe(422);
    expect((await latest()).id).toBe(before.id);
    expect((await self.call("GET", "/v2/deployments?name_contains=negative")).body.resources).toEqual([]);
  });

  it("takes zero, and the revision deploys", async () => {
    const spec = { min_scale: 0, max_scale: 0, memory_mb: 0, db_storage_gi: 0, db_cpu: 0 };
    const answer = await patch(spec);
    expect(answer.status).toBe(200);
    expect(answer.body.source_config.resource_spec).toMatchObject(spec);
    expect((await latest()).status).toBe("DEPLOYED");
  });
});

describe("a request above its limit, a minimum above its maximum", () => {
  it.each([
    [{ cpu: 2, cpu_limit: 1 }, "resource_spec.cpu 2 is above cpu_limit 1"],
    [{ memory_mb: 512, memory_limit_mb: 256 }, "resource_spec.memory_mb 512 is above memory_limit_mb 256"],
    [{ min_scale: 3, max_scale: 1 }, "resource_spec.min_scale 3 is above max_scale 1"],
    // queue_cpu defaults to cpu: the values compared are the ones the answer shows
    [{ cpu: 2, queue_cpu_limit: 1.5 }, "resource_spec.queue_cpu 2 is above queue_cpu_limit 1.5"],
    // compared once rounded (spec 2.4): 1.26 is 1.3, 1.24 is 1.2
    [{ redis_cpu: 1.26, redis_cpu_limit: 1.24 }, "resource_spec.redis_cpu 1.3 is above redis_cpu_limit 1.2"],
  ])("%j is taken and its revision ends DEPLOY_FAILED naming the fields", async (spec, message) => {
    const answer = await patch(spec);
    expect(answer.status).toBe(200);
    const revision = await latest();
    expect(revision.id).toBe(answer.body.latest_revision_id);
    expect(revision.status).toBe("DEPLOY_FAILED");
    expect(revision.status_message).toContain(message);
  });

  it("deploys equal values and values compared after rounding", async () => {
    expect((await patch({ cpu: 1.04, cpu_limit: 1, min_scale: 2, max_scale: 2 })).status).toBe(200);
    const revision = await latest();
    expect(revision.status).toBe("DEPLOYED");
    expect(revision.status_message).toBeNull();
  });
});
