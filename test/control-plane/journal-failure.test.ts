import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalFile } from "../../src/control-plane/journal-writer.js";
import { gitrepo, start } from "./helpers.js";

// A full disk under a running control plane, over real HTTP: the journal's writes fail with
// ENOSPC half-way for a while, then succeed again. Every write answered 2xx must be there after
// a restart on the same --data directory; a write answered 503 was not acknowledged.

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

const names = async (api: Awaited<ReturnType<typeof start>>) =>
  ((await api.call("GET", "/v2/deployments?limit=100")).body.resources as Array<{ name: string }>).map(
    (d) => d.name,
  );

describe("--data with a failing disk", () => {
  it("answers 503 while the journal cannot be written and loses no acknowledged write", async () => {
    const disk = fullDisk();
    const api = await start({ dataDir, wrapJournalFile: disk.wrap });
    expect((await api.call("POST", "/v2/deployments", gitrepo("before"))).status).toBe(201);

    disk.full.on = true;
    const failed = await api.call("POST", "/v2/deployments", gitrepo("torn"));
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("1");
    expect(failed.body.detail).toMatch(/ENOSPC.*not acknowledged/);
    // While the failed change waits, a new write is refused before it is applied; reads go on.
    const refused = await api.call("POST", "/v2/deployments", gitrepo("refused"));
    expect(refused.status).toBe(503);
    expect(await names(api)).toEqual(["before", "torn"]); // "torn" is in memory, outcome unknown

    disk.full.on = false;
    expect((await api.call("POST", "/v2/deployments", gitrepo("after-1"))).status).toBe(201);
    const id = (await api.call("POST", "/v2/deployments", gitrepo("after-2"))).body.id as string;
    expect((await api.call("PATCH", `/v2/deployments/${id}`, { secrets: [] })).status).toBe(200);
    await api.cp.stop();

    const again = await start({ dataDir });
    try {
      // Every acknowledged write, in order; "torn" was written again before "after-1".
      expect(await names(again)).toEqual(["before", "torn", "after-1", "after-2"]);
    } finally {
      await again.cp.stop();
    }
  });
});
