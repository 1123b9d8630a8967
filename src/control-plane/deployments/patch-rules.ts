import type {
  DeploymentPatchRequest,
  DeploymentSource,
  SourceConfig,
  SourceRevisionConfig,
  SecretReference,
} from "../../schema/deployment.js";
import { badRequest } from "../http/http-errors.js";
import { normalizeResourceSpec } from "../cpu.js";
import type { DeploymentRecord } from "./record.js";
import {
  checkRevisionConfigApplies,
  checkSourceConfigApplies,
  given,
  REVISION_FIELD_APPLIES,
} from "./source-fields.js";
import {
  checkListenerConfig,
  type CreatePlan,
  referencesSome,
  type RuleEnv,
  withoutIgnoredFields,
} from "./rules.js";

// The rules of a PATCH that depend on the stored deployment or the installation (rules.ts).

const IMMUTABLE: ReadonlyArray<"integration_id" | "repo_url" | "deployment_type" | "listener_id"> = [
  "integration_id",
  "repo_url",
  "deployment_type",
  "listener_id",
];

const isTag = (ref: unknown) => typeof ref === "string" && ref.startsWith("refs/tags/");

export type PatchPlan = CreatePlan & { createsRevision: boolean; revisionSource: string; changed: boolean };

/**
 * A PATCH body as the server takes it: the spec's DeploymentPatchRequest, plus `name` and `source`,
 * which spec 4.1 rule 2 says cannot be changed by patch. decisions.md ("Patch semantics"): sent with
 * the current value it is accepted and ignored, with another value it is a 400 naming the field.
 */
export type ServerPatchBody = DeploymentPatchRequest & {
  name?: string | null | undefined;
  source?: DeploymentSource | null | undefined;
};

/** `serverCustomUrl` is the custom_url the server shows for a gitrepo deployment (sending it is a no-op). */
export function planPatch(
  record: DeploymentRecord,
  body: ServerPatchBody,
  env: RuleEnv,
  serverCustomUrl: string,
): PatchPlan {
  const source = record.source;
  checkNameAndSource(record, body);
  const incoming = withoutIgnoredFields(body.source_config ?? {}, source);
  const revisionIn = body.source_revision_config ?? {};
  const revisionSource = body.revision_source ?? source;
  checkPatchApplies(source, body, incoming, revisionSource);
  checkListenerConfig(incoming.listener_config, record.sourceConfig.listener_id, env);
  checkUnchangeable(record, incoming, revisionIn, serverCustomUrl);
  checkTarball(record, revisionIn.source_tarball_path);
  const patched = patchedSourceConfig(source, record.sourceConfig, incoming);
  const sourceConfig = patched.sourceConfig;
  let changed = patched.changed;
  const sourceRevisionConfig: SourceRevisionConfig = { ...record.sourceRevisionConfig };
  for (const field of Object.keys(REVISION_FIELD_APPLIES) as Array<keyof typeof REVISION_FIELD_APPLIES>) {
    if (given(revisionIn[field])) sourceRevisionConfig[field] = revisionIn[field];
  }
  const createsRevision =
    Object.keys(REVISION_FIELD_APPLIES).some((f) =>
      given(revisionIn[f as keyof typeof REVISION_FIELD_APPLIES]),
    ) ||
    given(body.secrets) ||
    given(incoming.resource_spec);
  let secretReferences: SecretReference[] | null = record.secretReferences;
  if (given(body.secret_references) && source === "external_container") {
    secretReferences = body.secret_references;
    changed = true;
  }
  return {
    sourceConfig,
    sourceRevisionConfig,
    secretNames: body.secrets ? body.secrets.map((s) => s.name) : record.secretNames,
    secretReferences,
    createsRevision,
    revisionSource: createsRevision ? revisionSource : source,
    changed: changed || createsRevision,
  };
}

/** `name` and `source` (spec 4.1 rule 2): the current value is a no-op, another one a 400. */
function checkNameAndSource(record: DeploymentRecord, body: ServerPatchBody): void {
  for (const field of ["name", "source"] as const) {
    const sent = body[field];
    if (given(sent) && sent !== record[field])
      throw badRequest(
        `${field} cannot be changed after creation (it is ${JSON.stringify(record[field])}); create a new deployment instead`,
      );
  }
}

/** Every field the patch sends must apply to the deployment's source (and revision source). */
function checkPatchApplies(
  source: DeploymentSource,
  body: DeploymentPatchRequest,
  incoming: SourceConfig,
  revisionSource: string,
): void {
  const revisionIn = body.source_revision_config ?? {};
  checkRevisionSource(source, revisionSource);
  checkSourceConfigApplies(incoming, source, source === "gitrepo" ? ["custom_url"] : []);
  if (source !== "gitrepo" && source !== "external_container" && given(incoming.custom_url))
    throw badRequest(
      `source_config.custom_url does not apply to source ${source} (only to external_container)`,
    );
  checkRevisionConfigApplies(revisionIn, revisionSource);
  if (referencesSome(body.secret_references) && source !== "external_container")
    throw badRequest(`secret_references does not apply to source ${source} (only to external_container)`);
}

/** Immutable fields, the namespace, gitrepo's server-set custom_url, and build_on_push on a tag. */
function checkUnchangeable(
  record: DeploymentRecord,
  incoming: SourceConfig,
  revisionIn: SourceRevisionConfig,
  serverCustomUrl: string,
): void {
  const { source, sourceConfig: stored } = record;
  for (const field of IMMUTABLE) {
    if (given(incoming[field]) && incoming[field] !== stored[field])
      throw badRequest(
        `source_config.${field} cannot be changed after creation (it is ${JSON.stringify(stored[field] ?? null)})`,
      );
  }
  const namespace = incoming.listener_config?.k8s_namespace;
  if (given(namespace) && namespace !== (stored.listener_config?.k8s_namespace ?? null))
    throw badRequest("source_config.listener_config.k8s_namespace cannot be changed after creation");
  if (source === "gitrepo" && given(incoming.custom_url) && incoming.custom_url !== serverCustomUrl)
    throw badRequest(
      `source_config.custom_url is set by the server for source gitrepo and is read-only (it is ${serverCustomUrl})`,
    );
  const nextRef = revisionIn.repo_ref ?? record.sourceRevisionConfig.repo_ref;
  const nextBuildOnPush = incoming.build_on_push ?? stored.build_on_push;
  if (nextBuildOnPush === true && isTag(nextRef))
    throw badRequest(
      given(incoming.build_on_push)
        ? "source_config.build_on_push cannot be true: the stored repo_ref is a tag (refs/tags/...)"
        : "source_revision_config.repo_ref cannot be a tag while build_on_push is true; set build_on_push to false in the same patch",
    );
}

/** The stored source_config with the patch's in-place fields; `changed` when any differs. */
function patchedSourceConfig(
  source: DeploymentSource,
  stored: SourceConfig,
  incoming: SourceConfig,
): { sourceConfig: SourceConfig; changed: boolean } {
  const sourceConfig: SourceConfig = { ...stored };
  let changed = false;
  for (const field of ["build_on_push", "install_command", "build_command"] as const) {
    if (given(incoming[field]) && incoming[field] !== stored[field]) {
      (sourceConfig as Record<string, unknown>)[field] = incoming[field];
      changed = true;
    }
  }
  if (
    source === "external_container" &&
    given(incoming.custom_url) &&
    incoming.custom_url !== stored.custom_url
  ) {
    sourceConfig.custom_url = incoming.custom_url;
    changed = true;
  }
  if (given(incoming.listener_config) && !given(stored.listener_config)) {
    sourceConfig.listener_config = incoming.listener_config;
    changed = true;
  }
  if (given(incoming.resource_spec))
    sourceConfig.resource_spec = normalizeResourceSpec(incoming.resource_spec);
  return { sourceConfig, changed };
}

function checkRevisionSource(source: DeploymentSource, revisionSource: string) {
  if (revisionSource === source) return;
  if (revisionSource === "gitrepo")
    throw badRequest(`revision_source gitrepo needs a gitrepo deployment; this one has source ${source}`);
  if (source === "external_container")
    throw badRequest(`revision_source ${revisionSource} does not apply to source external_container`);
}

function checkTarball(record: DeploymentRecord, path: string | null | undefined) {
  if (!given(path)) return;
  const upload = record.uploads.find((u) => u.objectPath === path);
  if (!upload)
    throw badRequest(
      `source_revision_config.source_tarball_path ${path} was not issued by POST /v2/deployments/${record.id}/upload-url`,
    );
  if (!upload.uploaded)
    throw badRequest(
      `source_revision_config.source_tarball_path ${path} has no upload yet: PUT the tarball to its upload_url first`,
    );
}
