import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalFile } from "../../src/control-plane/storage/journal-writer.js";
import { type Api, gitrepo, start } from "./helpers.js";

// A full disk under a running control plane, over real HTTP: the journal's writes fail with
// ENOSPC half-way for a while, then succeed again. A write is all or nothing: answered 2xx, it is
// there after a restart on the same --data directory; answered 503, it was undone at once, so no
// read shows it and a restart does not lose it.

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-enospc-"));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

/** A disk that is full while `full.on` is true: each write stores half its bytes, then fails. */
function fullDisk() {
  const full = { on: false };
  const wrap = (file: JournalFile): JournalFile => ({
    async write(data, position) {
      if (!full.on) return file.write(data, position);
      await file.write(data.subarray(0, Math.ceil(data.length / 2)), position);
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    },
    datasync: () => file.datasync(),
    truncate: (length) => file.truncate(length),
    close: () => file.close(),
  });
  return { full, wrap };
}

const names = async (api: Api) =>
  ((await api.call("GET", "/v2/deployments?limit=100")).body.resources as Array<{ name: string }>).map(
    (d) => d.name,
  );

const revisionCount = async (api: Api, id: string) =>
  ((await api.call("GET", `/v2/deployments/${id}/revisions?limit=100`)).body.resources as unknown[]).length;

describe("--data with a failing disk", () => {
  it("answers 503 and undoes the write while the journal cannot be written; loses no acknowledged write", async () => {
    const disk = fullDisk();
    const api = await start({ dataDir, wrapJournalFile: disk.wrap });
    const before = await api.call("POST", "/v2/deployments", gitrepo("before"));
    expect(before.status).toBe(201);
    const id = before.body.id as string;

    disk.full.on = true;
    const failed = await api.call("POST", "/v2/deployments", gitrepo("torn"));
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("1");
    expect(failed.body.detail).toMatch(/ENOSPC.*not acknowledged and was undone/);
    // A PATCH that would make a revision, and a delete: both undone, the old values stay.
    const patch = { source_revision_config: { repo_ref: "release", graph_config_path: "langgraph.json" } };
    expect((await api.call("PATCH", `/v2/deployments/${id}`, patch)).status).toBe(503);
    expect((await api.call("DELETE", `/v2/deployments/${id}`)).status).toBe(503);
    expect(await names(api)).toEqual(["before"]);
    const kept = await api.call("GET", `/v2/deployments/${id}`);
    expect(kept.body.source_revision_config.repo_ref).toBe("main");
    expect(await revisionCount(api, id)).toBe(1);
    // The undone create left no trace: the name is free again once the disk has room.
    disk.full.on = false;
    expect((await api.call("POST", "/v2/deployments", gitrepo("torn"))).status).toBe(201);
    expect((await api.call("PATCH", `/v2/deployments/${id}`, patch)).status).toBe(200);
    expect((await api.call("POST", "/v2/deployments", gitrepo("after"))).status).toBe(201);
    await api.cp.stop();

    const again = await start({ dataDir });
    try {
      expect(await names(again)).toEqual(["before", "torn", "after"]);
      expect(await revisionCount(again, id)).toBe(2);
    } finally {
      await again.cp.stop();
    }
  });

  it("undoes agent-server and organization writes too, and the next writes go on", async () => {
    const disk = fullDisk();
    const api = await start({ dataDir, wrapJournalFile: disk.wrap });
    const id = (await api.call("POST", "/v2/deployments", gitrepo("agent"))).body.id as string;
    const threads = `/agents/${id}/threads`;
    const kept = (await api.call("POST", threads, { metadata: { n: 1 } })).body.thread_id as string;
    const org = "/api/v1/orgs/current/info";
    const orgBefore = (await api.call("GET", org)).body;

    disk.full.on = true;
    expect((await api.call("POST", threads, { metadata: { n: 2 } })).status).toBe(503);
    const orgPatch = await api.call("PATCH", org, { invites_enabled: !orgBefore.invites_enabled });
    expect(orgPatch.status).toBe(503);
    const search = await api.call("POST", `${threads}/search`, { limit: 10 });
    expect((search.body as Array<{ thread_id: string }>).map((t) => t.thread_id)).toEqual([kept]);
    expect((await api.call("GET", org)).body).toEqual(orgBefore);

    disk.full.on = false;
    expect((await api.call("POST", threads, { metadata: { n: 3 } })).status).toBe(200);
    await api.cp.stop();
    const again = await start({ dataDir });
    try {
      const all = await again.call("POST", `${threads}/search`, { limit: 10 });
      const metadata = (all.body as Array<{ metadata: { n: number } }>).map((t) => t.metadata.n).sort();
      expect(metadata).toEqual([1, 3]);
    } finally {
      await again.cp.stop();
    }
  });
});
