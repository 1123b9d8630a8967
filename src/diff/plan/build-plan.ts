import type { Deployment, Organization, Secret } from "../../schema/deployment.js";
import type {
  DeploymentManifest,
  DeploymentSpec,
  ManifestKind,
  OrganizationAccessManifest,
} from "../../schema/manifest.js";
import type { LoadedManifest } from "../../manifest/types.js";
import { buildCreateBody, normaliseCreate } from "../create-body.js";
import { diffDeployment } from "../diff-deployment.js";
import { diffDocuments } from "../diff-order.js";
import { type DesiredSource, planUpload, type RecordedSource } from "../diff-source.js";
import { show } from "../fields.js";
import { diffOrganizationAccess, ORGANIZATION_INFO_PATH } from "../organization-access.js";
import type { ChangeError, Plan, PlannedChange } from "./plan-types.js";
import type { SecretFingerprints } from "../secrets/secret-fingerprint.js";
import { tagBuildOnPushError } from "../tag-ref.js";
import { type AppliedBase, classifyFields } from "../three-way.js";

/** One manifest to plan, with its secret values already resolved (the only I/O plan needs for it). */
export type DesiredObject = {
  loaded: LoadedManifest;
  /** Resolved values of spec.secrets (Deployment); undefined when the manifest lists none. */
  secrets?: readonly Secret[];
  /** internal_source: the content of spec.source_path (read at the edge, like secret values). */
  source?: DesiredSource;
  /** Problems found while preparing it (e.g. a secret whose source cannot be read): the change cannot be planned. */
  errors?: readonly ChangeError[];
};

export type LiveState = {
  deployments: readonly Deployment[];
  /** The current organization; undefined when it was not read (no OrganizationAccess manifest). */
  organization?: Organization;
};

/** Fingerprints of the secret values last applied to an object (from the status store). */
type FingerprintLookup = (kind: ManifestKind, name: string) => SecretFingerprints | undefined;

/** What plumb last applied to a deployment (from the status store): the three-way model's base. */
type AppliedLookup = (kind: ManifestKind, name: string) => AppliedBase;

/** What plumb last uploaded to a deployment (from the status store). */
type SourceLookup = (kind: ManifestKind, name: string) => RecordedSource | undefined;

export type BuildPlanInput = {
  desired: readonly DesiredObject[];
  live: LiveState;
  fingerprints?: FingerprintLookup;
  sources?: SourceLookup;
  applied?: AppliedLookup;
};

/** The plan: for every desired object, what changes, how, and the one request that does it. Pure. */
export function buildPlan({
  desired,
  live,
  fingerprints = () => undefined,
  sources = () => undefined,
  applied = () => undefined,
}: BuildPlanInput): Plan {
  const byName = new Map(live.deployments.map((deployment) => [deployment.name, deployment]));
  const changes = desired.map((object) => {
    const { manifest } = object.loaded;
    return manifest.kind === "Deployment"
      ? planDeployment(
          object as DesiredObject & { loaded: LoadedManifest<DeploymentManifest> },
          byName,
          fingerprints,
          sources,
          applied,
        )
      : planOrganization(
          object as DesiredObject & { loaded: LoadedManifest<OrganizationAccessManifest> },
          live.organization,
          applied("OrganizationAccess", manifest.metadata.name),
        );
  });
  const summary = { create: 0, update: 0, noop: 0, refused: 0 };
  for (const change of changes) summary[change.action] += 1;
  return { format_version: "1", summary, changes };
}

function baseChange(loaded: LoadedManifest): PlannedChange {
  return {
    kind: loaded.manifest.kind,
    name: loaded.manifest.metadata.name,
    file: loaded.file,
    line: loaded.location.line,
    action: "noop",
    id: null,
    new_revision: false,
    revision_fields: [],
    in_place_fields: [],
    request: null,
    diff: [],
    errors: [],
    warnings: [],
    changed_secrets: [],
    fields: [],
  };
}

function planDeployment(
  object: DesiredObject & { loaded: LoadedManifest<DeploymentManifest> },
  live: ReadonlyMap<string, Deployment>,
  fingerprints: FingerprintLookup,
  sources: SourceLookup,
  applied: AppliedLookup,
): PlannedChange {
  const { loaded } = object;
  const { name } = loaded.manifest.metadata;
  const { spec } = loaded.manifest;
  const change = baseChange(loaded);
  const existing = live.get(name);
  // A revision built from a container image (revision_source) uploads no source.
  const uploads = spec.source === "internal_source" && (spec.revision_source ?? spec.source) === spec.source;
  const source = uploads ? object.source : undefined;
  if (uploads && !source && !object.errors?.length) {
    const message = "the content of source_path was not read, so the upload cannot be planned";
    return withObjectErrors(change, [{ field: "source_path", message }]);
  }
  if (!existing) {
    planCreation(change, object, source);
  } else if (existing.status === "AWAITING_DELETE") {
    // The control plane refuses every change to it (400), and a create of its name (409) until it
    // is gone: planned as a PATCH, apply failed on an API error that said nothing of the deletion.
    change.id = existing.id;
    change.action = "refused";
    change.errors = [
      {
        field: "",
        message: `deployment ${name} (${existing.id}) is being deleted (AWAITING_DELETE): nothing is sent to it; once it is gone, apply creates it again from this manifest (remove the manifest if it should stay deleted)`,
      },
    ];
  } else {
    const diff = diffDeployment({
      name,
      spec,
      secrets: object.secrets,
      live: existing,
      fingerprints: fingerprints("Deployment", name),
      source: source && { desired: source, recorded: sources("Deployment", name) },
    });
    if (diff.upload) change.upload = diff.upload;
    change.id = existing.id;
    change.warnings = diff.warnings;
    change.changed_secrets = diff.changedSecrets;
    const liveMoved = (last: Record<string, unknown>) =>
      diffDeployment({
        name,
        spec: last as DeploymentSpec,
        secrets: undefined,
        live: existing,
        fingerprints: undefined,
      }).fields;
    const moved = { secret_values_moved: diff.secretValuesMoved, upload: diff.upload ?? undefined };
    change.fields = classifyFields(moved, diff.fields, liveMoved, applied("Deployment", name));
    change.diff = diffDocuments(diff.live, diff.desired);
    change.revision_fields = diff.fields.filter((f) => f.class === "revision").map((f) => f.field);
    change.in_place_fields = diff.fields.filter((f) => f.class === "in_place").map((f) => f.field);
    change.new_revision = change.revision_fields.length > 0;
    change.errors = diff.fields
      .filter((f) => f.class === "immutable")
      .map((f) => {
        const at = loaded.locate(["spec", ...f.field.split(".")]);
        return {
          field: f.field,
          message: `${f.field} cannot change after creation (live ${show(f.old)}, desired ${show(f.new)}) at ${at.file}:${at.line}; restore the live value, or create the deployment under a new name`,
        };
      });
    const tagError =
      Object.keys(diff.body).length > 0
        ? tagBuildOnPushError(diff.body, existing, (path) => loaded.locate(path))
        : null;
    if (tagError) change.errors.push(tagError);
    if (change.errors.length > 0) change.action = "refused";
    else if (Object.keys(diff.body).length > 0) {
      change.action = "update";
      change.request = { method: "PATCH", path: `/v2/deployments/${existing.id}`, body: diff.body };
    }
  }
  return withObjectErrors(change, object.errors);
}

/** A deployment not live yet: POST it (then upload its source and PATCH, when it has one). */
function planCreation(
  change: PlannedChange,
  object: DesiredObject & { loaded: LoadedManifest<DeploymentManifest> },
  source: DesiredSource | undefined,
): void {
  const { metadata, spec } = object.loaded.manifest;
  const body = buildCreateBody(metadata.name, spec, object.secrets);
  change.action = "create";
  change.new_revision = true;
  change.request = { method: "POST", path: "/v2/deployments", body };
  const state = normaliseCreate(body);
  if (source) {
    // Created first, then uploaded and PATCHed (the upload URL needs the deployment's id).
    change.upload = planUpload(source, null, undefined)!;
    state.source_revision_config = {
      ...(state.source_revision_config as Record<string, unknown>),
      source_tarball_path: source.digest,
    };
  }
  change.diff = diffDocuments({}, state);
  change.changed_secrets = (object.secrets ?? []).map((secret) => secret.name).sort();
}

function planOrganization(
  object: DesiredObject & { loaded: LoadedManifest<OrganizationAccessManifest> },
  organization: Organization | undefined,
  applied: AppliedBase,
): PlannedChange {
  const change = baseChange(object.loaded);
  if (!organization) {
    change.action = "refused";
    change.errors = [
      { field: "", message: "the organization's settings could not be read (is the platform URL set?)" },
    ];
    return change;
  }
  const diff = diffOrganizationAccess(object.loaded.manifest.spec, organization);
  change.id = organization.id;
  const liveMoved = (last: Record<string, unknown>) => diffOrganizationAccess(last, organization).fields;
  change.fields = classifyFields({}, diff.fields, liveMoved, applied);
  change.in_place_fields = diff.fields.map((f) => f.field);
  change.diff = diffDocuments(diff.live, diff.desired);
  change.effect = diff.effect;
  if (diff.fields.length > 0) {
    change.action = "update";
    change.request = { method: "PATCH", path: ORGANIZATION_INFO_PATH, body: diff.body };
  }
  return withObjectErrors(change, object.errors);
}

/** Problems preparing the object (e.g. unreadable secret values) block its change. */
function withObjectErrors(change: PlannedChange, errors: readonly ChangeError[] | undefined): PlannedChange {
  if (!errors || errors.length === 0) return change;
  return {
    ...change,
    action: "refused",
    not_planned: true,
    request: null,
    errors: [...change.errors, ...errors],
  };
}
