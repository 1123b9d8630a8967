import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFaultSpec } from "../../src/control-plane/http/faults.js";
import { type Api, gitrepo, start } from "./helpers.js";

// `lost-response` must apply (and durably commit) the change before dropping the connection, and
// `reset` must apply nothing. The same --data directory is served by a faulty server, which takes
// the write, and then by a healthy one, which shows what was really applied.

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-faults-"));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

async function serve<T>(faults: string | undefined, body: (api: Api) => Promise<T>): Promise<T> {
  const api = await start({ dataDir, faults: faults === undefined ? undefined : parseFaultSpec(faults) });
  try {
    return await body(api);
  } finally {
    await api.cp.stop();
  }
}

/** The request must end without any HTTP answer: a network error, not a status. */
async function expectDropped(answer: Promise<unknown>) {
  const error = (await answer.then(
    (r) => ({ answered: r }),
    (e: unknown) => e,
  )) as { answered?: unknown; name?: string; message?: string };
  expect(error.answered, "an answer arrived").toBeUndefined();
  expect(error.name).toBe("TypeError"); // undici's "fetch failed": the socket closed unanswered
}

const byName = (api: Api, name: string) =>
  api
    .call("GET", `/v2/deployments?name_contains=${name}`)
    .then((r) => r.body.resources as Array<Record<string, unknown>>);

describe("fault fidelity end to end", () => {
  it("lost-response: a create is applied before the connection drops, and a retry sees it (409)", async () => {
    await serve("lost-response=1", (api) =>
      expectDropped(api.call("POST", "/v2/deployments", gitrepo("lost-create"))),
    );
    await serve(undefined, async (api) => {
      const found = await byName(api, "lost-create");
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ name: "lost-create", source_revision_config: { repo_ref: "main" } });
      expect((await api.call("POST", "/v2/deployments", gitrepo("lost-create"))).status).toBe(409);
    });
  });

  it("lost-response: a PATCH is applied (new revision) before the connection drops", async () => {
    const before = await serve(undefined, async (api) => {
      const created = await api.call("POST", "/v2/deployments", gitrepo("lost-patch"));
      expect(created.status).toBe(201);
      return created.body as { id: string; latest_revision_id: string };
    });
    const path = `/v2/deployments/${before.id}`;
    await serve("lost-response=1", (api) =>
      expectDropped(api.call("PATCH", path, { source_revision_config: { repo_ref: "release" } })),
    );
    await serve(undefined, async (api) => {
      const after = (await api.call("GET", path)).body;
      expect(after.source_revision_config.repo_ref).toBe("release");
      expect(after.latest_revision_id).not.toBe(before.latest_revision_id);
      const revisions = (await api.call("GET", `${path}/revisions`)).body.resources;
      expect(revisions.map((r: { id: string }) => r.id)).toEqual([
        after.latest_revision_id,
        before.latest_revision_id,
      ]);
    });
  });

  it("reset: neither a create nor a PATCH is applied", async () => {
    const before = await serve(undefined, async (api) => {
      const created = await api.call("POST", "/v2/deployments", gitrepo("reset-patch"));
      return created.body as { id: string; latest_revision_id: string; updated_at: string };
    });
    const path = `/v2/deployments/${before.id}`;
    await serve("reset=1", async (api) => {
      await expectDropped(api.call("POST", "/v2/deployments", gitrepo("reset-create")));
      await expectDropped(api.call("PATCH", path, { source_revision_config: { repo_ref: "never" } }));
      await expectDropped(api.call("DELETE", path));
    });
    await serve(undefined, async (api) => {
      expect(await byName(api, "reset-create")).toEqual([]);
      const after = (await api.call("GET", path)).body;
      expect(after).toMatchObject({
        status: "READY",
        latest_revision_id: before.latest_revision_id,
        updated_at: before.updated_at,
        source_revision_config: { repo_ref: "main" },
      });
      expect((await api.call("GET", `${path}/revisions`)).body.resources).toHaveLength(1);
    });
  });

  it("injected 500, 503 and 429 answer at once and apply nothing", async () => {
    const statuses = await serve("500=0.34,503=0.33,429=0.33", async (api) => {
      const seen = new Set<number>();
      for (let i = 0; i < 12; i++)
        seen.add((await api.call("POST", "/v2/deployments", gitrepo(`refused-${i}`))).status);
      return [...seen].sort();
    });
    expect(statuses).toEqual([429, 500, 503]);
    await serve(undefined, async (api) => expect(await byName(api, "refused-")).toEqual([]));
  });
});

describe("which routes faults apply to", () => {
  it("never to /info nor the agent server's /ok and /info; always to API calls", async () => {
    const id = await serve(undefined, async (api) => {
      return (await api.call("POST", "/v2/deployments", gitrepo("checks"))).body.id as string;
    });
    await serve("500=1", async (api) => {
      expect((await api.call("GET", "/info")).status).toBe(200);
      expect((await api.call("GET", `/agents/${id}/ok`)).body).toEqual({ ok: true });
      expect((await api.call("GET", `/agents/${id}/info`)).status).toBe(200);
      expect((await api.call("GET", "/v2/deployments")).status).toBe(500);
      expect((await api.call("GET", `/v2/deployments/${id}`)).status).toBe(500);
      expect((await api.call("POST", `/agents/${id}/threads`, {})).status).toBe(500);
    });
  });

  it("checks draw nothing from the generator: a seed gives API calls the same faults with or without them", async () => {
    const statuses = (withChecks: boolean) =>
      serve("500=0.3,503=0.2", async (api) => {
        const seen: number[] = [];
        for (let i = 0; i < 20; i++) {
          if (withChecks) await api.call("GET", "/info");
          seen.push((await api.call("GET", "/v2/listeners")).status);
        }
        return seen;
      });
    const plain = await statuses(false);
    expect(new Set(plain)).toEqual(new Set([200, 500, 503]));
    expect(await statuses(true)).toEqual(plain);
  });

  it("the README's example seed: 500=0.05,lost-response=0.02 with --fault-seed 4 answers the first 20 calls", async () => {
    const api = await start({ faults: parseFaultSpec("500=0.05,lost-response=0.02"), faultSeed: 4 });
    try {
      for (let i = 0; i < 20; i++)
        expect((await api.call("GET", "/v2/deployments")).status, `call ${i + 1}`).toBe(200);
    } finally {
      await api.cp.stop();
    }
  });
});
