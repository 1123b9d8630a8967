import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApplyResult } from "../../src/apply/apply-types.js";
import { buildObjectStatus } from "../../src/apply/status-record.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { mergeStatusStores, type ObjectStatus } from "../../src/status/status-types.js";

// The status record's source_upload: what plan compares the directory's digest with.

const result: ApplyResult = {
  kind: "Deployment",
  name: "docs",
  action: "update",
  id: "d1",
  outcome: "converged",
  revision_id: "r2",
  revision_status: "DEPLOYED",
  message: null,
  superseded_by: null,
  verify: null,
  sync: "Synced",
  health: "Healthy",
  elapsed_ms: 1,
};
const record = (input: Partial<Parameters<typeof buildObjectStatus>[0]> & { now: number }): ObjectStatus =>
  buildObjectStatus({
    result,
    previous: undefined,
    latestRevisionId: "r2",
    activeRevisionId: "r2",
    gitCommit: null,
    manifestDigest: null,
    fingerprints: undefined,
    sent: true,
    ...input,
  });
const first = { digest: `sha256:${"1".repeat(64)}`, object_path: "uploads/d1/a.tar.gz" };
const second = { digest: `sha256:${"2".repeat(64)}`, object_path: "uploads/d1/b.tar.gz" };

describe("source_upload in status records", () => {
  it("is set by the apply that uploaded, kept by later ones, absent from other records", () => {
    const uploaded = record({ sourceUpload: first, now: 1_000 });
    expect(uploaded.source_upload).toEqual(first);
    expect(record({ previous: uploaded, now: 2_000 }).source_upload).toEqual(first);
    expect(record({ previous: uploaded, sourceUpload: second, now: 3_000 }).source_upload).toEqual(second);
    expect("source_upload" in record({ now: 1_000 })).toBe(false);
  });

  it("round-trips through the store, and an older record without it still loads", async () => {
    const dir = await mkdtemp(join(tmpdir(), "plumb-source-status-"));
    try {
      await saveObjectStatus(dir, record({ sourceUpload: first, now: 1_000 }), anyFile);
      await saveObjectStatus(dir, { ...record({ now: 1_000 }), name: "plain" }, anyFile);
      const store = await loadStatusStore(dir);
      expect(store.problems).toEqual([]);
      expect(store.objects.get("Deployment/docs")!.source_upload).toEqual(first);
      expect(store.objects.get("Deployment/plain")!.source_upload).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("merges from the record of the later apply, not the newer observation", () => {
    const applied = record({ sourceUpload: second, now: 2_000 });
    // An older apply's record observed later (e.g. a drift check on a stale status branch).
    const stale = {
      ...record({ sourceUpload: first, now: 1_000 }),
      updated_at: new Date(5_000).toISOString(),
    };
    const one = { objects: new Map([["Deployment/docs", applied]]), problems: [] };
    const two = { objects: new Map([["Deployment/docs", stale]]), problems: [] };
    for (const merged of [mergeStatusStores(one, two), mergeStatusStores(two, one)])
      expect(merged.objects.get("Deployment/docs")!.source_upload).toEqual(second);
    const never = { ...record({ now: 1_000 }), updated_at: new Date(9_000).toISOString() };
    const three = { objects: new Map([["Deployment/docs", never]]), problems: [] };
    expect(mergeStatusStores(three, one).objects.get("Deployment/docs")!.source_upload).toEqual(second);
  });
});
