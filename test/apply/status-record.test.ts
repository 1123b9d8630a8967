import { describe, expect, it } from "vitest";
import type { ApplyResult } from "../../src/apply/apply-types.js";
import {
  buildObjectStatus,
  fingerprintsOfBodyAsync,
  type RecordInput,
  secretOriginsOf,
} from "../../src/apply/status-record.js";
import type { Manifest } from "../../src/schema/manifest.js";
import type { ObjectStatus } from "../../src/status/status-types.js";

// revision_status in the record apply writes: the status of the latest revision, also when apply
// sent nothing and waited for nothing (a no-op, e.g. after a restart without a status store).

const noop: ApplyResult = {
  kind: "Deployment",
  name: "api",
  action: "noop",
  id: "d1",
  outcome: "converged",
  revision_id: null,
  revision_status: null,
  message: null,
  superseded_by: null,
  verify: null,
  sync: "Synced",
  health: "Healthy",
  elapsed_ms: 1,
};

const record = (
  over: Partial<Omit<RecordInput, "result">> & { result?: Partial<ApplyResult> } = {},
): ObjectStatus =>
  buildObjectStatus({
    previous: undefined,
    latestRevisionId: "r1",
    activeRevisionId: "r1",
    gitCommit: null,
    manifestDigest: null,
    fingerprints: undefined,
    sent: false,
    now: 1_000,
    ...over,
    result: { ...noop, ...over.result },
  });

describe("buildObjectStatus revision_status", () => {
  it("is DEPLOYED for a no-op whose latest revision is the active one, with no earlier record", () => {
    expect(record().revision_status).toBe("DEPLOYED");
  });

  it("replaces a stale recorded status once the latest revision is active", () => {
    const previous = { ...record(), latest_revision_id: "r1", revision_status: "BUILDING" } as ObjectStatus;
    expect(record({ previous }).revision_status).toBe("DEPLOYED");
  });

  it("keeps the recorded status while the latest revision is not active yet", () => {
    const previous = { ...record(), revision_status: "BUILDING" } as ObjectStatus;
    expect(record({ latestRevisionId: "r2", previous }).revision_status).toBe("BUILDING");
    expect(record({ latestRevisionId: "r2" }).revision_status).toBeNull();
  });

  it("does not claim DEPLOYED when this apply failed, timed out or was skipped", () => {
    for (const outcome of ["failed", "timeout", "skipped"] as const)
      expect(record({ result: { outcome, sync: "Failed" } }).revision_status).toBeNull();
  });

  it("keeps the status the wait reported, and stays null without revisions", () => {
    const failed = { outcome: "failed" as const, revision_status: "BUILD_FAILED" as const };
    expect(record({ latestRevisionId: "r2", result: failed }).revision_status).toBe("BUILD_FAILED");
    const org = { kind: "OrganizationAccess" as const, id: "o1" };
    expect(
      record({ latestRevisionId: null, activeRevisionId: null, result: org }).revision_status,
    ).toBeNull();
  });
});

describe("fingerprintsOfBodyAsync", () => {
  const loaded = {
    file: "agents/api.yaml",
    manifest: {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "api" },
      spec: {
        secrets: [
          { name: "LITERAL", value: "in-git" },
          { name: "FROM_ENV", valueFrom: { env: "API_TOKEN" } },
          { name: "FROM_FILE", valueFrom: { file: "token.txt" } },
        ],
      },
    } as unknown as Manifest,
  };
  const body = {
    secrets: [
      { name: "LITERAL", value: "in-git" },
      { name: "FROM_ENV", value: "e-value" },
      { name: "FROM_FILE", value: "f-value" },
    ],
  };

  it("tells each secret's origin from the manifest", () => {
    expect(Object.fromEntries(secretOriginsOf(loaded) ?? [])).toEqual({
      LITERAL: { literal: true },
      FROM_ENV: { source: "env\0API_TOKEN" },
      FROM_FILE: { source: "file\0agents/token.txt" },
    });
    expect(secretOriginsOf(undefined)).toBeUndefined();
  });

  it("records a literal as an HMAC and a sourced value under its source's salt; without a manifest, as before", async () => {
    const fp = await fingerprintsOfBodyAsync(body, loaded);
    expect(fp?.values.LITERAL).toMatch(/^hmac-sha256\$/);
    expect(fp?.values.FROM_ENV).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(fp?.values.FROM_FILE?.split("$")[4]).not.toBe(fp?.values.FROM_ENV?.split("$")[4]);
    expect(fp?.set).toBeUndefined();
    const before = await fingerprintsOfBodyAsync(body, undefined);
    expect(before?.values.LITERAL).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+$/);
    expect(before?.set).toBeDefined();
  });
});
