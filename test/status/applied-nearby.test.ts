import { describe, expect, it } from "vitest";
import { latestAppliedNearby, withAppliedNearby, withSeenNearby } from "../../src/status/applied-nearby.js";
import { blankObjectStatus, type ObjectStatus, type StatusStore } from "../../src/status/status-types.js";

// What a PATH reads from the stores above and below it (docs/status.md "Stores above and below"):
// only what the last apply sent, the later apply winning; never a manifest_file or a pending intent.

const fingerprints = (tag: string) => ({ salt: `salt-${tag}`, values: { KEY: `fp-${tag}` } });

const record = (
  name: string,
  at: string | null,
  tag: string,
  extra: Partial<ObjectStatus> = {},
): ObjectStatus => ({
  ...blankObjectStatus("Deployment", name),
  id: `id-${name}`,
  health: "Healthy",
  sync: "Synced",
  applied_at: at,
  updated_at: at ?? "2026-01-01T00:00:00.000Z",
  git_commit: `commit-${tag}`,
  manifest_digest: `sha256:${tag}`,
  secret_fingerprints: fingerprints(tag),
  applied_spec: { tag },
  manifest_file: `${tag}/${name}.yaml`,
  ...extra,
});

const store = (...records: ObjectStatus[]): StatusStore => ({
  objects: new Map(records.map((r) => [`Deployment/${r.name}`, r])),
  problems: [],
});

const EARLY = "2026-01-01T10:00:00.000Z";
const LATE = "2026-01-01T11:00:00.000Z";
const LATER = "2026-01-01T12:00:00.000Z";

const pending: ObjectStatus["pending"] = {
  secret_fingerprints: null,
  manifest_digest: "sha256:intent",
  git_commit: null,
  base_revision_id: null,
  base_updated_at: null,
  started_at: EARLY,
};

describe("latestAppliedNearby", () => {
  it("keeps, per object, the applied part of the later apply among the stores above", () => {
    const parts = latestAppliedNearby([store(record("a", EARLY, "near")), store(record("a", LATE, "far"))]);
    const a = parts.get("Deployment/a")!;
    expect(a.secret_fingerprints).toEqual(fingerprints("far"));
    expect(a.applied_at).toBe(LATE);
    expect(a.applied_spec).toEqual({ tag: "far" });
  });

  it("takes no manifest_file or pending intent from above, keeps which deployment it was; skips records never applied", () => {
    const parts = latestAppliedNearby([
      store(record("a", LATE, "above", { pending }), record("never", null, "n")),
    ]);
    const a = parts.get("Deployment/a")!;
    expect(a.manifest_file).toBeUndefined();
    expect(a.pending).toBeUndefined();
    expect(a.id).toBe("id-a"); // plan trusts it for that deployment only
    expect(parts.has("Deployment/never")).toBe(false);
  });

  it("takes what was last seen of the object (health, verify thread, checks): a no-op is not verified again", () => {
    const checks: NonNullable<ObjectStatus["checks"]> = {
      revision_id: "rev-1",
      at: LATE,
      runs: 3,
      passed: 3,
      pass_ratio: 1,
      latency_ms: { p50: 10, p95: 12, max: 12 },
    };
    const [a] = latestAppliedNearby([
      store(record("a", LATE, "above", { verify_thread_id: "thread-1", checks })),
    ]).values();
    expect(a).toMatchObject({ health: "Healthy", verify_thread_id: "thread-1", checks });
    expect(a!.sync).toBe("OutOfSync"); // the sync of another PATH's view is not taken
  });
});

describe("withAppliedNearby", () => {
  it("takes the applied part from above when that apply was later, keeping the local rest", () => {
    const above = latestAppliedNearby([store(record("a", LATE, "above", { source_upload: undefined }))]);
    const local = store(
      record("a", EARLY, "local", { source_upload: { digest: "sha256:old", object_path: "o/old" } }),
    );
    const a = withAppliedNearby(local, above).objects.get("Deployment/a")!;
    expect(a.secret_fingerprints).toEqual(fingerprints("above"));
    expect(a.manifest_digest).toBe("sha256:above");
    expect(a.git_commit).toBe("commit-above");
    expect(a.applied_at).toBe(LATE);
    expect(a.applied_spec).toEqual({ tag: "above" });
    expect(a.source_upload).toBeUndefined(); // the later apply's, even when it had none
    expect(a.manifest_file).toBe("local/a.yaml");
    expect(a.id).toBe("id-a");
    expect(a.health).toBe("Healthy");
  });

  it("keeps the local record when its apply was later or as late", () => {
    const above = latestAppliedNearby([store(record("a", LATE, "above"), record("b", LATE, "above"))]);
    const merged = withAppliedNearby(store(record("a", LATER, "local"), record("b", LATE, "local")), above);
    expect(merged.objects.get("Deployment/a")!.secret_fingerprints).toEqual(fingerprints("local"));
    expect(merged.objects.get("Deployment/b")!.secret_fingerprints).toEqual(fingerprints("local"));
  });

  it("keeps the local applied part when the later one nearby was applied to another deployment id", () => {
    const local = record("a", EARLY, "local");
    const other = latestAppliedNearby([store(record("a", LATER, "above", { id: "id-elsewhere" }))]);
    expect(withAppliedNearby(store(local), other).objects.get("Deployment/a")).toBe(local);
  });

  it("keeps a local record with a pending intent as it is, even when the apply above is later", () => {
    const local = record("a", EARLY, "local", { pending });
    const merged = withAppliedNearby(store(local), latestAppliedNearby([store(record("a", LATER, "above"))]));
    expect(merged.objects.get("Deployment/a")).toBe(local);
  });

  it("gives an object recorded only above a record of its applied part alone", () => {
    const merged = withAppliedNearby(store(), latestAppliedNearby([store(record("c", LATE, "above"))]));
    const c = merged.objects.get("Deployment/c")!;
    expect(c.secret_fingerprints).toEqual(fingerprints("above"));
    expect(c.manifest_file).toBeUndefined();
    expect(c.pending).toBeUndefined();
    expect(c.applied_at).toBe(LATE);
  });

  it("returns the local store itself when nothing is recorded above", () => {
    const local = store(record("a", EARLY, "local"));
    expect(withAppliedNearby(local, new Map())).toBe(local);
  });
});

describe("withSeenNearby (what plumb status SUBDIR shows)", () => {
  const checks = (at: string, passed: number, revision = "rev-2") => ({
    revision_id: revision,
    at,
    runs: 1,
    passed,
    pass_ratio: passed,
    latency_ms: { p50: 1, p95: 1, max: 1 },
  });
  const own = record("a", EARLY, "own", { active_revision_id: "rev-2", checks: checks(EARLY, 1) });
  const seenFrom = (...records: ObjectStatus[]) => latestAppliedNearby([store(...records)]);

  it("takes the later applied part and the later checks with the health they gave on the active revision", () => {
    const nearby = seenFrom(record("a", LATE, "tree", { health: "Degraded", checks: checks(LATE, 0) }));
    const [shown] = withSeenNearby([own], nearby);
    expect(shown?.applied_at).toBe(LATE);
    expect(shown?.git_commit).toBe("commit-tree");
    expect(shown?.checks?.passed).toBe(0);
    expect(shown?.health).toBe("Degraded");
    expect(shown?.manifest_file).toBe(own.manifest_file);
  });

  it("keeps its own health when the later checks ran on another revision than the active one", () => {
    const nearby = seenFrom(
      record("a", LATE, "tree", { health: "Degraded", checks: checks(LATE, 0, "rev-1") }),
    );
    const [shown] = withSeenNearby([own], nearby);
    expect(shown?.checks?.revision_id).toBe("rev-1");
    expect(shown?.health).toBe("Healthy");
  });

  it("keeps its own health when it is not one checks decide (Progressing)", () => {
    const nearby = seenFrom(record("a", LATE, "tree", { health: "Degraded", checks: checks(LATE, 0) }));
    const [shown] = withSeenNearby([{ ...own, health: "Progressing" }], nearby);
    expect(shown?.health).toBe("Progressing");
  });

  it("keeps its own checks when they are the later ones, and an earlier apply's part", () => {
    const nearby = seenFrom(record("a", EARLY, "tree", { health: "Degraded", checks: checks(EARLY, 0) }));
    const mine = { ...own, applied_at: LATE, checks: checks(LATER, 1) };
    expect(withSeenNearby([mine], nearby)).toEqual([mine]);
  });

  it("takes nothing for a pending record, another deployment's record, or an object not seen nearby", () => {
    const nearby = seenFrom(record("a", LATE, "tree", { health: "Degraded", checks: checks(LATE, 0) }));
    const busy = { ...own, pending };
    const other = { ...own, id: "id-other" };
    const unseen = record("b", EARLY, "own");
    expect(withSeenNearby([busy, other, unseen], nearby)).toEqual([busy, other, unseen]);
  });
});
