import {
  type FieldChange,
  type FieldOrigin,
  type PlannedChange,
  type PlannedUpload,
  SOURCE_TARBALL_FIELD,
} from "./plan-types.js";
import type { SecretFingerprints } from "./secret-fingerprint.js";
import { deepEqual, isObject, type JsonObject } from "./values.js";

// The three-way model (docs/status.md "Three-way"): git, live, and what plumb last applied (the
// status record's applied_spec and secret fingerprints). For a field where git and live differ:
// git ≠ last-applied and live = last-applied is a change (to apply); git = last-applied and
// live ≠ last-applied is drift (changed outside plumb); both moved is a conflict. Pure.

export type LastApplied = {
  /** The manifest spec as last applied (secret values left out). */
  spec: Record<string, unknown>;
  /** Fingerprints of the secret values last applied; their names are the secrets last applied. */
  fingerprints: SecretFingerprints | undefined;
};

const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((name, i) => name === [...b].sort()[i]);

function secretsOrigin(
  field: FieldChange,
  changedSecrets: readonly string[],
  applied: LastApplied,
): FieldOrigin {
  if (!applied.fingerprints) return "change";
  const appliedNames = Object.keys(applied.fingerprints.values);
  const gitMoved = changedSecrets.length > 0 || !sameNames(field.new as string[], appliedNames);
  const liveMoved = !sameNames(field.old as string[], appliedNames);
  return gitMoved && liveMoved ? "conflict" : liveMoved ? "drift" : "change";
}

/** A source replaced outside plumb (live holds another tarball): drift, or a conflict when git's content changed too. */
const uploadOrigin = (upload: PlannedUpload | undefined): FieldOrigin =>
  upload?.reason !== "replaced" ? "change" : upload.previous_digest === upload.digest ? "drift" : "conflict";

/**
 * Each field where git and live differ with its origin. `liveMoved` diffs a spec against live by the
 * plan's own rules (diffDeployment, diffOrganizationAccess): given the last applied spec, it names the
 * fields live moved. Unchanged (no origin) when nothing was recorded as applied (a record older than
 * applied_spec): then which side moved is not known.
 */
export function classifyFields(
  change: Pick<PlannedChange, "changed_secrets" | "upload">,
  fields: readonly FieldChange[],
  liveMoved: (appliedSpec: Record<string, unknown>) => readonly FieldChange[],
  applied: LastApplied | undefined,
): FieldChange[] {
  if (!applied || fields.length === 0) return [...fields];
  let moved: Map<string, FieldChange>;
  try {
    moved = new Map(liveMoved(applied.spec).map((f) => [f.field, f]));
  } catch {
    return [...fields]; // a record this version cannot read as a spec: origin unknown
  }
  return fields.map((field) => {
    let origin: FieldOrigin;
    if (field.field === "secrets") origin = secretsOrigin(field, change.changed_secrets, applied);
    else if (field.field === SOURCE_TARBALL_FIELD) origin = uploadOrigin(change.upload);
    else {
      const last = moved.get(field.field);
      origin = !last ? "change" : deepEqual(last.new, field.new) ? "drift" : "conflict";
    }
    return { ...field, origin };
  });
}

/** The fields of a change that are drift (live moved, git did not). */
export const driftFields = (change: PlannedChange): FieldChange[] =>
  (change.fields ?? []).filter((f) => f.origin === "drift");

const RESOURCE_SPEC = "source_config.resource_spec.";

/** Removes `path` from a body; resource_spec is sent whole, so a sub-field there keeps its live value. */
function keepLive(body: JsonObject, field: FieldChange): void {
  if (field.field.startsWith(RESOURCE_SPEC)) {
    const spec = (body.source_config as JsonObject | undefined)?.resource_spec;
    const key = field.field.slice(RESOURCE_SPEC.length);
    if (isObject(spec)) {
      if (field.old === null || field.old === undefined) delete spec[key];
      else spec[key] = field.old;
    }
    return;
  }
  const path = field.field.split(".");
  let at: unknown = body;
  for (const key of path.slice(0, -1)) at = isObject(at) ? at[key] : undefined;
  if (isObject(at)) delete at[path[path.length - 1]!];
}

/** resource_spec goes only when one of its own fields is still sent; empty sections go too. */
function tidy(body: JsonObject, fields: readonly FieldChange[]): void {
  const config = body.source_config;
  if (isObject(config) && !fields.some((f) => f.field.startsWith(RESOURCE_SPEC))) delete config.resource_spec;
  for (const section of ["source_config", "source_revision_config"])
    if (isObject(body[section]) && Object.keys(body[section]).length === 0) delete body[section];
}

/**
 * The change without its drifted fields (what a controller without --self-heal sends): the request
 * carries only the changes and conflicts, or there is none left to send ("noop"). Pure.
 */
export function withoutDrift(change: PlannedChange): PlannedChange {
  const drift = driftFields(change);
  if (drift.length === 0 || change.action !== "update" || !change.request) return change;
  const fields = (change.fields ?? []).filter((f) => f.origin !== "drift");
  const revision = fields.filter((f) => f.class === "revision").map((f) => f.field);
  const inPlace = fields.filter((f) => f.class === "in_place").map((f) => f.field);
  if (revision.length + inPlace.length === 0)
    return {
      ...change,
      action: "noop",
      request: null,
      fields,
      revision_fields: [],
      in_place_fields: [],
      new_revision: false,
    };
  const body = structuredClone(change.request.body);
  for (const field of drift) keepLive(body, field);
  tidy(body, fields);
  if (revision.length === 0) delete body.revision_source;
  const upload = drift.some((f) => f.field === SOURCE_TARBALL_FIELD) ? undefined : change.upload;
  const { upload: _upload, ...rest } = change;
  return {
    ...rest,
    ...(upload ? { upload } : {}),
    request: { ...change.request, body },
    fields,
    revision_fields: revision,
    in_place_fields: inPlace,
    new_revision: revision.length > 0,
    changed_secrets: drift.some((f) => f.field === "secrets") ? [] : change.changed_secrets,
  };
}
