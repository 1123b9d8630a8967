import { type Static, Type } from "@sinclair/typebox";
import type { RecordedSource } from "../diff/diff-source.js";
import type { SecretFingerprints } from "../diff/secrets/secret-fingerprint.js";
import { Nullable } from "../schema/common.js";
import { ChecksRecord } from "./checks-record.js";
import { REVISION_STATUSES } from "../schema/revision.js";
import { KINDS } from "../schema/manifest.js";

// What plumb records per managed object after apply, drift and status: one JSON file per object.

export const SYNC_STATUSES = ["Synced", "OutOfSync", "Progressing", "Failed", "Refused", "Unknown"] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];
export const HEALTH_STATUSES = ["Healthy", "Progressing", "Degraded", "Unknown"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const ObjectStatus = Type.Object({
  kind: Type.Union(KINDS.map((k) => Type.Literal(k))),
  name: Type.String({ minLength: 1 }),
  /** Live id; null for an object never created (e.g. a refused create). */
  id: Nullable(Type.String()),
  latest_revision_id: Nullable(Type.String()),
  active_revision_id: Nullable(Type.String()),
  revision_status: Nullable(Type.Union(REVISION_STATUSES.map((s) => Type.Literal(s)))),
  sync: Type.Union(SYNC_STATUSES.map((s) => Type.Literal(s))),
  health: Type.Union(HEALTH_STATUSES.map((s) => Type.Literal(s))),
  /** Commit of the manifest repository the applied manifest came from (null outside git). */
  git_commit: Nullable(Type.String()),
  /** sha256 of the manifest document as applied (canonical JSON, secret values excluded). */
  manifest_digest: Nullable(Type.String()),
  /**
   * Salted slow fingerprints of the secret values last applied (src/diff/secrets/secret-fingerprint.ts).
   * Same shape as SecretFingerprints; the store never holds a value.
   */
  secret_fingerprints: Nullable(
    Type.Object({
      salt: Type.String(),
      values: Type.Record(Type.String(), Type.String()),
      set: Type.Optional(Type.String()),
    }),
  ),
  /**
   * internal_source: content digest of spec.source_path and the object path it was uploaded to, once
   * the PATCH setting that path was accepted. Plan uploads again when either no longer matches.
   */
  source_upload: Type.Optional(Nullable(Type.Object({ digest: Type.String(), object_path: Type.String() }))),
  /** Thread plumb reuses for spec.verify on this deployment's agent server. */
  verify_thread_id: Type.Optional(Nullable(Type.String())),
  /** The agent's checks (spec.verify) of the revision named in it: pass ratio, latency (checks-record.ts). */
  checks: Type.Optional(Nullable(ChecksRecord)),
  /** ISO 8601 time of the last apply that sent this object a request (owner of the fields above). */
  applied_at: Type.Optional(Nullable(Type.String())),
  /**
   * Write-ahead intent: written durably before a request is sent, cleared once its outcome is
   * recorded. A record still holding it after a crash is resolved against live (pending-intent.ts):
   * the request landed when live moved past what the intent saw, and then its fingerprints apply.
   */
  pending: Type.Optional(
    Nullable(
      Type.Object({
        secret_fingerprints: Nullable(
          Type.Object({
            salt: Type.String(),
            values: Type.Record(Type.String(), Type.String()),
            set: Type.Optional(Type.String()),
          }),
        ),
        manifest_digest: Nullable(Type.String()),
        git_commit: Nullable(Type.String()),
        /** Live latest_revision_id / updated_at before sending; both null for a create. */
        base_revision_id: Nullable(Type.String()),
        base_updated_at: Nullable(Type.String()),
        started_at: Type.String(),
      }),
    ),
  ),
  /**
   * The manifest's spec as last applied (secret values left out: the fingerprints say whether they
   * changed). The third side of the three-way model (src/diff/three-way.ts): git against it is a
   * change, live against it is drift. Absent in records older than it, or when nothing was applied.
   */
  applied_spec: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  /**
   * Sequence number, raised by one at every write of this record (status-store.ts): a write that
   * was prepared from an older record than the file now holds is merged or dropped, never applied.
   */
  seq: Type.Optional(Type.Integer({ minimum: 0 })),
  /** "disabled" when the applied manifest said plumb/prune: disabled: apply --prune never deletes it. */
  prune: Type.Optional(Nullable(Type.Literal("disabled"))),
  /**
   * The manifest file that last defined the object, relative to the manifest directory (PATH, or
   * the directory of a single file): prune judges an object removed only inside the PATH loaded.
   */
  manifest_file: Type.Optional(Nullable(Type.String())),
  /** ISO 8601 time of this record. */
  updated_at: Type.String(),
  last_error: Nullable(Type.String()),
});
export type ObjectStatus = Static<typeof ObjectStatus>;
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
