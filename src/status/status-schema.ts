import { type Static, Type } from "@sinclair/typebox";
import { Nullable } from "../schema/common.js";
import { KINDS, REVISION_STATUSES } from "../schema/constants.js";
import { ChecksRecord } from "./checks/checks-record.js";
import { HEALTH_STATUSES, SYNC_STATUSES } from "./status-values.js";

// The shape of a status record (status-types.ts): its validator is compiled at build time
// (scripts/validators-module.ts, status-store.ts checks each record read with it), so what runs
// imports this module for its type only and does not load TypeBox.

export const ObjectStatusShape = Type.Object({
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
        /**
         * internal_source: the digest of the source this request uploads and PATCHes. Landed (live
         * holds a tarball path other than the record's), it becomes the record's source_upload.
         */
        source_digest: Type.Optional(Nullable(Type.String())),
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
  /**
   * The manifest directory manifest_file is relative to: its path from the root of its git
   * repository ("." for the root), or absolute outside git (status/manifest-root.ts). Absent in
   * older records: read as the directory whose default store holds them (docs/status.md).
   */
  manifest_root: Type.Optional(Nullable(Type.String())),
  /** ISO 8601 time of this record. */
  updated_at: Type.String(),
  last_error: Nullable(Type.String()),
});
export type ObjectStatusShape = Static<typeof ObjectStatusShape>;
