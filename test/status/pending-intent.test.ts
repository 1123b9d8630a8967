import { describe, expect, it } from "vitest";
import {
  buildIntent,
  intentLanded,
  resolvePending,
  resolveStorePending,
} from "../../src/status/pending-intent.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import type { Deployment } from "../../src/schema/deployment.js";

const old = { salt: "s", values: { TOKEN: "scrypt$old" } };
const sent = { salt: "s", values: { TOKEN: "scrypt$new" } };
const live = (over: Partial<Deployment> = {}) =>
  ({
    id: "d1",
    name: "a",
    latest_revision_id: "r1",
    updated_at: "2026-01-01T00:00:00Z",
    ...over,
  }) as Deployment;

const record = (over: Partial<ObjectStatus> = {}): ObjectStatus => ({
  kind: "Deployment",
  name: "a",
  id: "d1",
  latest_revision_id: "r1",
  active_revision_id: "r1",
  revision_status: "DEPLOYED",
  sync: "Synced",
  health: "Healthy",
  git_commit: "c0",
  manifest_digest: "sha256:old",
  secret_fingerprints: old,
  updated_at: "2026-01-01T00:00:00Z",
  last_error: null,
  ...over,
});

const intent = (base: Deployment | null) =>
  buildIntent({
    fingerprints: sent,
    manifestDigest: "sha256:new",
    gitCommit: "c1",
    live: base,
    now: Date.parse("2026-01-02T00:00:00Z"),
  });

describe("write-ahead intents settled against live", () => {
  it("a PATCH landed when the latest revision moved: its fingerprints become the record's", () => {
    const r = record({ pending: intent(live()) });
    expect(intentLanded(r, live({ latest_revision_id: "r2" }))).toBe(true);
    const settled = resolvePending(r, live({ latest_revision_id: "r2" }));
    expect(settled).toMatchObject({
      secret_fingerprints: sent,
      manifest_digest: "sha256:new",
      git_commit: "c1",
    });
    expect(settled.pending).toBeUndefined();
  });

  it("an in-place PATCH landed when updated_at moved", () => {
    const r = record({ pending: intent(live()) });
    expect(intentLanded(r, live({ updated_at: "2026-01-02T00:00:01Z" }))).toBe(true);
  });

  it("a PATCH that never arrived is dropped and the old fingerprints stay", () => {
    const r = record({ pending: intent(live()) });
    const settled = resolvePending(r, live());
    expect(settled.secret_fingerprints).toBe(old);
    expect(settled.pending).toBeUndefined();
  });

  it("a create landed when a deployment of that name exists; not when none does", () => {
    const r = record({ id: null, secret_fingerprints: null, pending: intent(null) });
    expect(resolvePending(r, live({ id: "new" }))).toMatchObject({ id: "new", secret_fingerprints: sent });
    expect(resolvePending(r, null)).toMatchObject({ id: null, secret_fingerprints: null });
  });

  it("another deployment under the recorded id's name (recreated elsewhere) is not ours", () => {
    const r = record({ pending: intent(live()) });
    expect(intentLanded(r, live({ id: "other", latest_revision_id: "r9" }))).toBe(false);
  });

  it("undefined live (not looked at) leaves the record alone; the store settles only planned keys", () => {
    const r = record({ pending: intent(live()) });
    expect(resolvePending(r, undefined)).toBe(r);
    const store = { objects: new Map([["Deployment/a", r]]), problems: [] };
    expect(
      resolveStorePending(store, [live({ latest_revision_id: "r2" })], new Set()).objects.get("Deployment/a"),
    ).toBe(r);
    const settled = resolveStorePending(
      store,
      [live({ latest_revision_id: "r2" })],
      new Set(["Deployment/a"]),
    );
    expect(settled.objects.get("Deployment/a")?.secret_fingerprints).toBe(sent);
  });
});

describe("an internal_source upload's intent", () => {
  const uploading = (base: Deployment | null) =>
    buildIntent({
      fingerprints: undefined,
      manifestDigest: "sha256:new",
      gitCommit: "c1",
      live: base,
      now: Date.parse("2026-01-02T00:00:00Z"),
      sourceDigest: "sha256:src-new",
    });
  const withTarball = (path: string, over: Partial<Deployment> = {}) =>
    live({
      source_revision_config: { source_tarball_path: path },
      ...over,
    });
  const recorded = { digest: "sha256:src-old", object_path: "tenant/old.tgz" };

  it("landed (live holds a new tarball path): the source digest and that path become the record's", () => {
    const r = record({ source_upload: recorded, pending: uploading(withTarball("tenant/old.tgz")) });
    const settled = resolvePending(r, withTarball("tenant/new.tgz", { latest_revision_id: "r2" }));
    expect(settled.source_upload).toEqual({ digest: "sha256:src-new", object_path: "tenant/new.tgz" });
    expect(settled.pending).toBeUndefined();
  });

  it("killed before its PATCH (live moved, its tarball did not): the recorded upload stays", () => {
    const r = record({ source_upload: recorded, pending: uploading(withTarball("tenant/old.tgz")) });
    const settled = resolvePending(r, withTarball("tenant/old.tgz", { updated_at: "2026-01-02T00:00:01Z" }));
    expect(settled.source_upload).toEqual(recorded);
  });
});
