import { describe, expect, it } from "vitest";
import type { DesiredObject } from "../../../src/diff/plan/build-plan.js";
import type { PlannedChange } from "../../../src/diff/plan/plan-types.js";
import { fingerprintSecrets } from "../../../src/diff/secrets/secret-fingerprint.js";
import type { LoadedManifest } from "../../../src/manifest/types.js";
import {
  buildApplyObject,
  checkRecordedSecrets,
  settleRecorded,
} from "../../../src/reconcile/plan/plan-object.js";
import type { Deployment } from "../../../src/schema/deployment.js";
import { buildIntent } from "../../../src/status/pending-intent.js";
import type { ObjectStatus } from "../../../src/status/status-types.js";
import { sampleStatus } from "../fixtures.js";

// The per-object steps plan and the controller share (plan-object.ts).

const here = { line: 1, column: 1 };
const desired = (token: string, verify?: unknown): DesiredObject => ({
  loaded: {
    manifest: {
      apiVersion: "plumb/v1",
      kind: "Deployment",
      metadata: { name: "a" },
      spec: { source: "github", ...(verify ? { verify } : {}) },
    },
    file: "a.yaml",
    location: here,
    locate: () => here,
  } as unknown as LoadedManifest,
  secrets: [{ name: "TOKEN", value: token }],
});

const live = (latest: string): Deployment =>
  ({ id: "d1", name: "a", latest_revision_id: latest, updated_at: "2026-01-01T00:00:00Z" }) as Deployment;

const record = (token: string, over: Partial<ObjectStatus> = {}): ObjectStatus =>
  sampleStatus("a", {
    id: "d1",
    latest_revision_id: "r1",
    manifest_digest: "sha256:old",
    secret_fingerprints: fingerprintSecrets([{ name: "TOKEN", value: token }], "salt"),
    ...over,
  });

/** A record whose write-ahead intent sent `sent` while live was at revision r1. */
const withIntent = (token: string, sent: string): ObjectStatus =>
  record(token, {
    pending: buildIntent({
      fingerprints: fingerprintSecrets([{ name: "TOKEN", value: sent }], "salt"),
      manifestDigest: "sha256:new",
      gitCommit: "c1",
      live: live("r1"),
      now: Date.parse("2026-01-02T00:00:00Z"),
    }),
  });

describe("checkRecordedSecrets", () => {
  it("checks each desired value against the recorded fingerprint", async () => {
    const same = await checkRecordedSecrets(desired("v1"), record("v1"));
    const changed = await checkRecordedSecrets(desired("v2"), record("v1"));
    expect(same?.checked?.get("TOKEN")?.match).toBe(true);
    expect(changed?.checked?.get("TOKEN")?.match).toBe(false);
  });

  it("checks nothing without a record or its fingerprints", async () => {
    expect(await checkRecordedSecrets(desired("v1"), undefined)).toBeUndefined();
    expect(
      await checkRecordedSecrets(desired("v1"), record("v1", { secret_fingerprints: null })),
    ).toBeUndefined();
  });
});

describe("settleRecorded", () => {
  it("a landed intent's fingerprints become the record's and the values are checked against them", async () => {
    const recorded = withIntent("v1", "v2");
    const checked = await checkRecordedSecrets(desired("v2"), recorded);
    expect(checked?.checked?.get("TOKEN")?.match).toBe(false);
    const settled = await settleRecorded(desired("v2"), recorded, checked, live("r2"));
    expect(settled.previous?.pending).toBeUndefined();
    expect(settled.previous?.manifest_digest).toBe("sha256:new");
    expect(settled.checked?.checked?.get("TOKEN")?.match).toBe(true);
  });

  it("an intent that did not land is dropped and the first check stands", async () => {
    const recorded = withIntent("v1", "v2");
    const checked = await checkRecordedSecrets(desired("v2"), recorded);
    const settled = await settleRecorded(desired("v2"), recorded, checked, live("r1"));
    expect(settled.previous?.pending).toBeUndefined();
    expect(settled.previous?.manifest_digest).toBe("sha256:old");
    expect(settled.checked).toBe(checked);
  });

  it("a record without an intent is kept as it is", async () => {
    const recorded = record("v1");
    const settled = await settleRecorded(desired("v1"), recorded, undefined, live("r9"));
    expect(settled.previous).toBe(recorded);
  });
});

describe("buildApplyObject", () => {
  it("carries the manifest's verify spec and digest, and no source without one", () => {
    const change = { kind: "Deployment", name: "a", action: "update" } as PlannedChange;
    const object = buildApplyObject(change, desired("v1", { input: "hi" }), "/root");
    expect(object.change).toBe(change);
    expect(object.verify).toEqual({ input: "hi" });
    expect(object.manifestDigest).toMatch(/^sha256:/);
    expect(object.source).toBeUndefined();
  });

  it("a change with no manifest (a prune) has no digest", () => {
    const change = { kind: "Deployment", name: "gone", action: "delete" } as unknown as PlannedChange;
    expect(buildApplyObject(change, undefined, "/root").manifestDigest).toBeNull();
  });
});
