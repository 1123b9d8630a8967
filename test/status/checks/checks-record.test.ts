import { describe, expect, it } from "vitest";
import { buildObjectStatus } from "../../../src/apply/status-record.js";
import type { ApplyResult } from "../../../src/apply/apply-types.js";
import type { ChecksRecord } from "../../../src/status/checks/checks-record.js";
import { appliedDigest, checksMatchApplied } from "../../../src/status/checks/checks-record-applied.js";
import { mergeStatusStores, type ObjectStatus, type StatusStore } from "../../../src/status/status-types.js";
import { status } from "../../controller/fixtures.js";

// The record's `checks` (the agent's checks of one revision): written by apply, kept by records
// that measured nothing, and the newer one kept when two stores are merged (status branch).

const checks = (revision: string, at: string): ChecksRecord => ({
  revision_id: revision,
  at,
  runs: 2,
  passed: 2,
  pass_ratio: 1,
  latency_ms: { p50: 10, p95: 20, max: 20 },
});

const store = (record: ObjectStatus): StatusStore => ({
  objects: new Map([[`${record.kind}/${record.name}`, record]]),
  problems: [],
});

const result = (verify: ApplyResult["verify"]): ApplyResult => ({
  kind: "Deployment",
  name: "a",
  action: "noop",
  id: "id-a",
  outcome: "converged",
  revision_id: null,
  revision_status: null,
  message: null,
  superseded_by: null,
  verify,
  sync: "Synced",
  health: "Healthy",
  elapsed_ms: 1,
});

const input = (verify: ApplyResult["verify"], previous: ObjectStatus | undefined) => ({
  result: result(verify),
  previous,
  latestRevisionId: null,
  activeRevisionId: null,
  gitCommit: null,
  manifestDigest: null,
  fingerprints: undefined,
  sent: false,
  now: Date.parse("2026-11-25T19:00:00Z"),
});

describe("the status record's checks", () => {
  it("are what the apply measured, else the previous record's, else absent", () => {
    const measured = checks("rev-2", "2026-11-25T19:00:00.000Z");
    const previous = status("a", { checks: checks("rev-1", "2026-11-24T00:00:00.000Z") });
    const verify = { ok: true, thread_id: null, run_id: null, message: "ok", checks: measured };
    // Stamped with the applied state they verified: the record's applied spec and fingerprints.
    const written = buildObjectStatus(input(verify, previous));
    expect(written.checks).toEqual({ ...measured, applied_digest: appliedDigest(written) });
    expect(checksMatchApplied(written)).toBe(true);
    expect(buildObjectStatus(input(null, previous)).checks).toEqual(previous.checks);
    expect("checks" in buildObjectStatus(input(null, status("a")))).toBe(false);
  });

  it("merging two stores keeps the checks measured last, whichever record is newer", () => {
    const older = checks("rev-1", "2026-11-24T00:00:00.000Z");
    const newer = checks("rev-2", "2026-11-25T00:00:00.000Z");
    // The record updated last (a drift check elsewhere) holds the older checks.
    const a = status("a", { updated_at: "2026-11-26T00:00:00.000Z", checks: older });
    const b = status("a", { updated_at: "2026-11-25T00:00:00.000Z", checks: newer });
    for (const merged of [mergeStatusStores(store(a), store(b)), mergeStatusStores(store(b), store(a))])
      expect(merged.objects.get("Deployment/a")!.checks).toEqual(newer);
    const none = mergeStatusStores(
      store(status("a")),
      store(status("a", { updated_at: "2026-12-01T00:00:00.000Z" })),
    );
    expect("checks" in none.objects.get("Deployment/a")!).toBe(false);
  });
  it("say which applied state they verified: a change applied since, not verify's own cases, breaks the match", () => {
    const verify = {
      ok: true,
      thread_id: null,
      run_id: null,
      message: "ok",
      checks: checks("rev-2", "2026-11-25T19:00:00.000Z"),
    };
    const spec = {
      source: "external_container",
      source_config: { custom_url: "http://a" },
      verify: { cases: [] },
    };
    const written = buildObjectStatus({ ...input(verify, status("a")), appliedSpec: spec });
    expect(checksMatchApplied(written)).toBe(true);
    // Another case in spec.verify: nothing sent changes, the checks still stand for what runs.
    const recases = { ...spec, verify: { cases: [{ name: "x" }] } };
    expect(checksMatchApplied({ ...written, applied_spec: recases })).toBe(true);
    // custom_url changed in place (same revision), recorded by an apply that did not verify.
    const moved = { ...spec, source_config: { custom_url: "http://b" } };
    const after = buildObjectStatus({ ...input(null, written), sent: true, appliedSpec: moved });
    expect(after.checks).toEqual(written.checks);
    expect(checksMatchApplied(after)).toBe(false);
    // A record of an older plumb says nothing of what it verified.
    const { applied_digest: _digest, ...old } = written.checks!;
    expect(checksMatchApplied({ ...written, checks: old })).toBe(false);
  });
});
