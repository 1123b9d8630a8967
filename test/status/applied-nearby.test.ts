import { describe, expect, it } from "vitest";
import { latestAppliedNearby, withAppliedNearby } from "../../src/status/applied-nearby.js";
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
