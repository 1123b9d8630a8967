import {
  type FieldChange,
  type FieldOrigin,
  type PlannedChange,
  type PlannedUpload,
  SOURCE_TARBALL_FIELD,
} from "./plan/plan-types.js";
import type { SecretFingerprints } from "./secrets/secret-fingerprint.js";
import { deepEqual, isObject, type JsonObject } from "./values.js";

// The three-way model (docs/status.md "Three-way"): git, live, and what plumb last applied (the
// status record's applied_spec and secret fingerprints). For a field where git and live differ:
// git ≠ last-applied and live = last-applied is a change (to apply); git = last-applied and
// live ≠ last-applied is drift (changed outside plumb); both moved is a conflict.
// When a record says something was applied but not what (older than applied_spec, and git no longer
// is what it applied), the base is unknown: every field where git and live differ is "unknown", and
// nothing writes one side's value over the other's (drift --write, a controller without --self-heal).
// Pure.

type LastApplied = {
  /** The manifest spec as last applied (secret values left out). */
  spec: Record<string, unknown>;
  /** Fingerprints of the secret values last applied; their names are the secrets last applied. */
  fingerprints: SecretFingerprints | undefined;
};

/** The base of an object: what was last applied, "unknown" (applied, but not known what), or undefined (never applied). */
export type AppliedBase = LastApplied | "unknown" | undefined;

/** The same names, in any order (a secret list holds a name once). */
const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((name) => b.includes(name));

/** git moved when its names or one of its values differ from the last applied ones (a secret live lost is live's move). */
function secretsOrigin(field: FieldChange, valuesMoved: boolean, applied: LastApplied): FieldOrigin {
  if (!applied.fingerprints) return "change";
  const appliedNames = Object.keys(applied.fingerprints.values);
  const gitMoved = valuesMoved || !sameNames(field.new as string[], appliedNames);
  const liveMoved = !sameNames(field.old as string[], appliedNames);
  return gitMoved && liveMoved ? "conflict" : liveMoved ? "drift" : "change";
}

/** A source replaced outside plumb (live holds another tarball): drift, or a conflict when git's content changed too. */
const uploadOrigin = (upload: PlannedUpload | undefined): FieldOrigin =>
  // Stryker disable next-line OptionalChaining: equivalent, the upload's field is planned only with its upload
  upload?.reason !== "replaced" ? "change" : upload.previous_digest === upload.digest ? "drift" : "conflict";

/**
 * Each field where git and live differ with its origin. `liveMoved` diffs a spec against live by the
 * plan's own rules (diffDeployment, diffOrganizationAccess): given the last applied spec, it names the
 * fields live moved. Unchanged (no origin) when plumb never applied the object; every field
 * "unknown" when it did but the base is not known (see AppliedBase).
 */
export function classifyFields(
  change: { secret_values_moved?: boolean | undefined; upload?: PlannedUpload | undefined },
  fields: readonly FieldChange[],
  liveMoved: (appliedSpec: Record<string, unknown>) => readonly FieldChange[],
  applied: AppliedBase,
): FieldChange[] {
  if (!applied || fields.length === 0) return [...fields];
  const unknown = () => fields.map((field): FieldChange => ({ ...field, origin: "unknown" }));
  if (applied === "unknown") return unknown();
  let moved: Map<string, FieldChange>;
  try {
    moved = new Map(liveMoved(applied.spec).map((f) => [f.field, f]));
  } catch {
    return unknown(); // a record this version cannot read as a spec
  }
  return fields.map((field) => {
    let origin: FieldOrigin;
    if (field.field === "secrets")
      origin = secretsOrigin(field, change.secret_values_moved === true, applied);
    else if (field.field === SOURCE_TARBALL_FIELD) origin = uploadOrigin(change.upload);
    else {
      const last = moved.get(field.field);
      origin = !last ? "change" : deepEqual(last.new, field.new) ? "drift" : "conflict";
    }
    return { ...field, origin };
  });
}

/**
 * The fields a change holds back unless asked to heal (--self-heal): drift (live moved, git did not)
 * and fields whose base is unknown (which side moved cannot be told, so live's value stays).
 */
export const driftFields = (change: PlannedChange): FieldChange[] =>
  // Stryker disable next-line ArrayDeclaration: equivalent, a stand-in item has no origin to hold
  (change.fields ?? []).filter(isHeld);

const isHeld = (field: FieldChange): boolean => field.origin === "drift" || field.origin === "unknown";

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
 * The change without its held fields (driftFields: what a controller without --self-heal sends): the
 * request carries only the changes and conflicts, or there is none left to send ("noop"). Pure.
 */
export function withoutDrift(change: PlannedChange): PlannedChange {
  const drift = driftFields(change);
  // Only an update has a request and fields (a refused change has no request).
  if (drift.length === 0 || !change.request) return change;
  const fields = change.fields!.filter((f) => !isHeld(f));
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
