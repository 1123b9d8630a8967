import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadStatusStore, mergeStatusStores, statusKey } from "../../src/status/status-store.js";
import {
  anyFile,
  removeObjectStatus,
  removeObservedStatus,
  saveObjectStatus,
  saveObservedStatus,
} from "../../src/status/write/save-records.js";
import { sampleStatus } from "../reconcile/fixtures.js";

describe("status store", () => {
  it("round-trips one file per object and reports unreadable files", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "plumb-st-")), "status");
    await saveObjectStatus(dir, sampleStatus("alpha"), anyFile);
    await saveObjectStatus(dir, sampleStatus("beta", { sync: "OutOfSync", health: "Degraded" }), anyFile);
    await saveObjectStatus(dir, { ...sampleStatus("org"), kind: "OrganizationAccess", id: null }, anyFile);
    await writeFile(join(dir, "broken.json"), "{not json");
    await writeFile(join(dir, "other.json"), JSON.stringify({ kind: "Deployment" }));
    expect((await readdir(dir)).sort()).toEqual([
      "broken.json",
      "deployment.alpha.json",
      "deployment.beta.json",
      "organizationaccess.org.json",
      "other.json",
    ]);
    const store = await loadStatusStore(dir);
    expect(store.objects.get(statusKey("Deployment", "beta"))?.health).toBe("Degraded");
    expect(store.objects.get(statusKey("OrganizationAccess", "org"))?.id).toBeNull();
    expect(store.objects.size).toBe(3);
    expect(store.problems.map((p) => p.file.split("/").pop()).sort()).toEqual(["broken.json", "other.json"]);
    expect(JSON.parse(await readFile(join(dir, "deployment.alpha.json"), "utf8"))).toEqual({
      ...sampleStatus("alpha"),
      seq: 1,
    });
    await removeObjectStatus(dir, "Deployment", "alpha", anyFile);
    expect((await loadStatusStore(dir)).objects.has("Deployment/alpha")).toBe(false);
  });

  it("creates missing directories on the first write, leaves no temp file, and ignores one a kill left", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "plumb-st-")), "a", "b");
    const file = await saveObjectStatus(dir, sampleStatus("alpha"), anyFile);
    await saveObjectStatus(dir, sampleStatus("alpha", { sync: "OutOfSync" }), anyFile);
    expect(await readdir(dir)).toEqual([file.split("/").pop()]);
    // A process killed between writing its temp file and the rename leaves `<record>.<pid>.<hex>.tmp`.
    await writeFile(`${file}.123.abcdef.tmp`, "{half a rec");
    const store = await loadStatusStore(dir);
    expect(store.problems).toEqual([]);
    expect([...store.objects.values()].map((r) => r.sync)).toEqual(["OutOfSync"]);
  });

  it("a directory that cannot hold records is status-write-failed, naming the file", async () => {
    const parent = await mkdtemp(join(tmpdir(), "plumb-st-"));
    await writeFile(join(parent, "file"), "");
    await expect(
      saveObjectStatus(join(parent, "file", "status"), sampleStatus("alpha"), anyFile),
    ).rejects.toMatchObject({
      code: "status-write-failed",
      message: expect.stringContaining("deployment.alpha.json"),
    });
  });

  it("treats a missing directory as empty", async () => {
    const store = await loadStatusStore(join(tmpdir(), "plumb-does-not-exist-xyz"));
    expect(store.objects.size).toBe(0);
  });

  it("merges: observed fields from the newer record, applied fields from the later apply", () => {
    const applied = sampleStatus("a", {
      updated_at: "2026-01-01T00:00:00Z",
      applied_at: "2026-01-01T00:00:00Z",
      git_commit: "applied",
      sync: "Synced",
    });
    // A later drift check in a fresh clone: newer observation, nothing applied, no fingerprints.
    const observed = sampleStatus("a", {
      updated_at: "2026-01-02T00:00:00Z",
      applied_at: null,
      git_commit: null,
      secret_fingerprints: null,
      sync: "OutOfSync",
    });
    const one = { objects: new Map([["Deployment/a", applied]]), problems: [] };
    const two = { objects: new Map([["Deployment/a", observed]]), problems: [] };
    for (const merged of [mergeStatusStores(one, two), mergeStatusStores(two, one)]) {
      const record = merged.objects.get("Deployment/a")!;
      expect(record.sync).toBe("OutOfSync");
      expect(record.git_commit).toBe("applied");
      expect(record.secret_fingerprints).toEqual(applied.secret_fingerprints);
    }
  });

  it("numbers every write; an apply older than the file keeps the file's applied fields", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "plumb-st-")), "status");
    const newer = sampleStatus("a", {
      applied_at: "2026-01-02T00:00:00Z",
      manifest_digest: "sha256:new",
      secret_fingerprints: { salt: "s", values: { TOKEN: "new" } },
    });
    await saveObjectStatus(dir, newer, anyFile);
    await saveObjectStatus(dir, { ...newer, sync: "Synced" }, anyFile);
    const slow = sampleStatus("a", {
      applied_at: "2026-01-01T00:00:00Z",
      manifest_digest: "sha256:old",
      secret_fingerprints: { salt: "s", values: { TOKEN: "old" } },
      health: "Degraded",
    });
    await saveObjectStatus(dir, slow, anyFile);
    const record = (await loadStatusStore(dir)).objects.get("Deployment/a")!;
    expect(record.seq).toBe(3);
    expect(record.health).toBe("Degraded");
    expect(record.manifest_digest).toBe("sha256:new");
    expect(record.secret_fingerprints?.values).toEqual({ TOKEN: "new" });
  });

  it("an observation made from an older record than the file is dropped, as is a removal", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "plumb-st-")), "status");
    await saveObjectStatus(dir, sampleStatus("a"), anyFile);
    const loaded = (await loadStatusStore(dir)).objects.get("Deployment/a")!;
    await saveObjectStatus(dir, { ...loaded, manifest_digest: "sha256:applied-meanwhile" }, anyFile);
    expect(await saveObservedStatus(dir, { ...loaded, sync: "OutOfSync" }, loaded.seq ?? 0, anyFile)).toBe(
      false,
    );
    expect(await removeObservedStatus(dir, loaded, anyFile)).toBe(false);
    expect(await saveObservedStatus(dir, sampleStatus("b"), null, anyFile)).toBe(true);
    expect(await saveObservedStatus(dir, sampleStatus("b"), null, anyFile)).toBe(false);
    const store = (await loadStatusStore(dir)).objects;
    expect(store.get("Deployment/a")?.manifest_digest).toBe("sha256:applied-meanwhile");
    const current = store.get("Deployment/a")!;
    expect(await saveObservedStatus(dir, { ...current, sync: "OutOfSync" }, current.seq ?? 0, anyFile)).toBe(
      true,
    );
    expect((await loadStatusStore(dir)).objects.get("Deployment/a")).toMatchObject({
      sync: "OutOfSync",
      seq: 3,
    });
  });
});
