import type { Operation } from "fast-json-patch";
import type { ManifestKind } from "../../schema/manifest.js";

// The plan: what must change, how, and the exact request that does it. Built by pure functions in
// src/diff/, rendered by the formatters, executed by src/reconcile/. The JSON output of
// `plumb plan --output json` is this shape with every secret value replaced by "<redacted>".

type ChangeAction = "create" | "update" | "noop" | "refused";

export type PlannedRequest = {
  method: "POST" | "PATCH";
  /** API path, e.g. /v2/deployments/{id} or /api/v1/organizations/current/info. */
  path: string;
  /** The real body, secret values included: never print it unredacted. */
  body: Record<string, unknown>;
};

export type ChangeError = { field: string; message: string };

/** immutable: spec 4.1 rule 2 (refused); revision: rule 1 (creates a revision); in_place: the rest. */
type FieldClass = "immutable" | "revision" | "in_place";

/** One changed field: dotted API path, class, and the normalised live (old) and desired (new) values. */
export type FieldChange = {
  field: string;
  class: FieldClass;
  old: unknown;
  new: unknown;
  /** Secrets: old/new hold the names only, never values. */
  sensitive?: boolean;
  /**
   * Live (old) held a secret of the run, now redacted in `old` (src/reconcile/plan/live-secrets.ts):
   * drift --write never writes it back.
   */
  live_redacted?: true;
  /**
   * Which side moved since plumb last applied (src/diff/three-way.ts): absent when plumb never
   * applied the object (no record of it) and on creates; "unknown" when a record says something
   * was applied but not what (a record older than applied_spec whose digest is not git's).
   */
  origin?: FieldOrigin;
};

/**
 * change: git moved (apply it); drift: live moved (changed outside plumb); conflict: both moved;
 * unknown: the base is not known, so neither side's value may be written over the other's.
 */
export type FieldOrigin = "change" | "drift" | "conflict" | "unknown";

/** The revision field an internal_source upload sets (its value is issued at apply time). */
export const SOURCE_TARBALL_FIELD = "source_revision_config.source_tarball_path";
/** Stands for the object path in a planned PATCH body; apply uploads, then puts the issued path here. */
export const UPLOAD_PLACEHOLDER = "<object_path issued by upload-url at apply time>";

/** Why a source is uploaded: no tarball live, live tarball not known to plumb, one replaced out of band, or new content. */
export type UploadReason = "not_uploaded" | "unknown" | "replaced" | "changed";

/** An internal_source upload the change carries (spec.source_path packed, uploaded, then PATCHed). */
export type PlannedUpload = {
  /** spec.source_path as written (relative to the manifest file). */
  source_path: string;
  /** Content digest of the directory (see docs/manifests.md). */
  digest: string;
  /** Digest recorded after plumb's last upload to this deployment; null when none is recorded. */
  previous_digest: string | null;
  reason: UploadReason;
  /** What the upload holds: each file's path (relative, '/') and size in bytes, sorted by path. */
  files?: UploadFile[];
};

export type UploadFile = { path: string; size: number };

export type PlannedChange = {
  kind: ManifestKind;
  name: string;
  /** Manifest file (relative to the manifest root) and line of the document. */
  file: string;
  line: number;
  action: ChangeAction;
  /** Live id; null when the object does not exist yet. */
  id: string | null;
  new_revision: boolean;
  /** Dotted API paths, e.g. "source_revision_config.image_uri", "secrets". */
  revision_fields: string[];
  in_place_fields: string[];
  request: PlannedRequest | null;
  /** RFC 6902 operations from normalised live to desired. */
  diff: Operation[];
  /** Why the change is refused (immutable fields) or cannot be planned. */
  errors: ChangeError[];
  /**
   * Set (true) on a "refused" change that could not be planned because of an error of its own (e.g.
   * a secret's environment variable is not set), not because of an immutable field; absent otherwise.
   */
  not_planned?: true;
  /** Things the user should know that do not block the change (e.g. a field PATCH cannot clear). */
  warnings: ChangeError[];
  /** Secret names whose values changed or are unknown; values are never stored here. */
  changed_secrets: string[];
  /** Field-level old → new values for display (always set by buildPlan; secrets by name only). */
  fields?: FieldChange[];
  /** OrganizationAccess: one line saying who can join after the change (spec 3.4). */
  effect?: string;
  /** internal_source: the source upload this change makes (create, or content changed); absent otherwise. */
  upload?: PlannedUpload;
  /**
   * Replace (--replace NAME or plumb/replace: allowed): this create follows the deletion of the live
   * deployment `id`, whose immutable `fields` differ. Downtime, and a new id.
   */
  replaces?: { id: string; fields: string[] };
  /** A Deployment with spec.verify: the checks apply runs after DEPLOYED, and the last ones recorded. */
  checks?: PlannedChecks;
};

export type PlannedChecks = {
  /** Runs per apply: (cases + the smoke question) × repeat. */
  runs: number;
  min_pass_ratio: number;
  max_latency_p95_ms: number | null;
  /** The status record's checks, when any ran (of the revision named). */
  last: { revision_id: string; runs: number; passed: number; pass_ratio: number; p95_ms: number } | null;
  /** The first problem of a self-contradictory checks record (then last is null; docs/environments.md). */
  last_invalid?: string;
};

/**
 * A managed object (it has a status record) whose manifest is gone: a deployment is "delete"d with
 * --prune, otherwise an "orphan" (kept). `refused` says why it may not be deleted (plumb/prune:
 * disabled). An organization's settings cannot be deleted: with --prune plumb stops managing them
 * ("release": its record is dropped, nothing is sent), otherwise an "orphan"; `refused` says so.
 * `deleting`: the control plane is deleting it already (AWAITING_DELETE: an apply killed after its
 * DELETE landed): apply --prune sends no DELETE again, it waits until the deployment is gone.
 */
export type PlannedPrune =
  | {
      kind: "Deployment";
      name: string;
      id: string;
      action: "orphan" | "delete";
      refused?: string;
      deleting?: true;
    }
  | { kind: "OrganizationAccess"; name: string; id: string; action: "orphan" | "release"; refused: string };

/** create/update/noop/refused count `changes`; orphan/delete count `prune` (absent before it is planned). */
type PlanSummary = Record<ChangeAction, number> & {
  orphan?: number;
  delete?: number;
  replace?: number;
};

export type Plan = {
  format_version: "1";
  summary: PlanSummary;
  changes: PlannedChange[];
  /** Managed objects removed from git (src/diff/plan/plan-prune.ts); absent when not planned (e.g. --target). */
  prune?: PlannedPrune[];
};
