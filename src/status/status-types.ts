import type { RecordedSource } from "../diff/diff-source.js";
import type { SecretFingerprints } from "../diff/secrets/secret-fingerprint.js";
import type { ObjectStatusShape } from "./status-schema.js";

// What plumb records per managed object after apply, drift and status: one JSON file per object.

export { HEALTH_STATUSES, type HealthStatus, SYNC_STATUSES, type SyncStatus } from "./status-values.js";

export type ObjectStatus = ObjectStatusShape;
export type PendingIntent = NonNullable<ObjectStatus["pending"]>;

// The record's fingerprints are exactly what src/diff/secrets/secret-fingerprint.ts produces and reads.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _sameFingerprints: Same<NonNullable<ObjectStatus["secret_fingerprints"]>, SecretFingerprints> = true;
void _sameFingerprints;

// The record's source upload is exactly what src/diff/diff-source.ts reads.
const _sameSource: Same<NonNullable<ObjectStatus["source_upload"]>, RecordedSource> = true;
void _sameSource;

/** The loaded store: records keyed by `statusKey(kind, name)`, plus files that could not be read. */
export type StatusStore = {
  objects: Map<string, ObjectStatus>;
  /** Unreadable or invalid files (path and reason); such a file is ignored, never trusted. */
  problems: Array<{ file: string; message: string }>;
};

export const statusKey = (kind: string, name: string): string => `${kind}/${name}`;

/** File name of one object's record: `deployment.NAME.json`, `organizationaccess.NAME.json`. */
export const statusFileName = (kind: string, name: string): string => `${kind.toLowerCase()}.${name}.json`;

export const emptyStatusStore = (): StatusStore => ({ objects: new Map(), problems: [] });

const time = (iso: string | null | undefined) => (iso ? Date.parse(iso) || 0 : 0);

/**
 * Merges two records of one object. What was observed (sync, health, revisions) comes from the newer
 * record; what the last apply sent (git commit, digest, secret fingerprints, source upload) from the
 * record of the later apply, so a drift check in a fresh clone never hides them on the status branch.
 */
function mergeObjectStatus(a: ObjectStatus, b: ObjectStatus): ObjectStatus {
  const observed = time(b.updated_at) > time(a.updated_at) ? b : a;
  const applied = time(b.applied_at) > time(a.applied_at) ? b : a;
  const { source_upload: _observedUpload, applied_spec: _observedSpec, ...seen } = observed;
  return {
    ...seen,
    git_commit: applied.git_commit,
    manifest_digest: applied.manifest_digest,
    secret_fingerprints: applied.secret_fingerprints,
    ...(applied.source_upload ? { source_upload: applied.source_upload } : {}),
    applied_at: applied.applied_at ?? null,
    ...(applied.applied_spec ? { applied_spec: applied.applied_spec } : {}),
    verify_thread_id: observed.verify_thread_id ?? applied.verify_thread_id ?? null,
    // The checks measured last, whichever record holds them.
    ...(a.checks || b.checks
      ? { checks: time(b.checks?.at) > time(a.checks?.at) ? (b.checks ?? null) : (a.checks ?? null) }
      : {}),
    // The merge is newer than both: a refresh made from it may replace either (status-store.ts).
    seq: Math.max(a.seq ?? 0, b.seq ?? 0),
  };
}

/** Merges two stores object by object (see mergeObjectStatus). */
export function mergeStatusStores(a: StatusStore, b: StatusStore): StatusStore {
  const objects = new Map(a.objects);
  for (const [key, status] of b.objects) {
    const current = objects.get(key);
    objects.set(key, current ? mergeObjectStatus(current, status) : status);
  }
  return { objects, problems: [...a.problems, ...b.problems] };
}

/** The record of an object nothing is known about yet (never applied, never seen live). */
export function blankObjectStatus(kind: ObjectStatus["kind"], name: string): ObjectStatus {
  return {
    kind,
    name,
    id: null,
    latest_revision_id: null,
    active_revision_id: null,
    revision_status: null,
    sync: "OutOfSync",
    health: "Unknown",
    git_commit: null,
    manifest_digest: null,
    secret_fingerprints: null,
    verify_thread_id: null,
    applied_at: null,
    updated_at: "",
    last_error: null,
  };
}
