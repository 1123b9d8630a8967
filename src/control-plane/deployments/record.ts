import type {
  Deployment,
  DeploymentSource,
  DeploymentStatus,
  SecretReference,
  SourceConfig,
  SourceRevisionConfig,
} from "../../schema/deployment.js";
import { MASKED_SECRET_VALUE } from "../../schema/deployment.js";
import { ResourceSpec } from "../../schema/resource-spec.js";
import type { RevisionRecord } from "./revisions.js";
import { REVISION_CONFIG_KEYS, revisionStateAt } from "./revisions.js";

/** An object path issued by upload-url; `uploaded` once its PUT arrived. */
export type UploadRecord = { objectPath: string; token: string; uploaded: boolean; size: number };

/** What the store keeps per deployment. Secret values are never stored, only their names. */
export type DeploymentRecord = {
  id: string;
  tenantId: string;
  name: string;
  source: DeploymentSource;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig;
  secretNames: string[];
  secretReferences: SecretReference[] | null;
  createdAt: number;
  updatedAt: number;
  deletedAt?: number;
  /** Oldest first. */
  revisions: RevisionRecord[];
  uploads: UploadRecord[];
};

export type Timing = { revisionMs: number; readyMs: number };

const SOURCE_CONFIG_KEYS = [
  "integration_id",
  "repo_url",
  "deployment_type",
  "build_on_push",
  "custom_url",
  "resource_spec",
  "listener_id",
  "listener_config",
  "install_command",
  "build_command",
] as const;

function deploymentStatus(record: DeploymentRecord, now: number, timing: Timing): DeploymentStatus {
  if (record.deletedAt !== undefined) return "AWAITING_DELETE";
  return now - record.createdAt >= timing.readyMs ? "READY" : "AWAITING_DATABASE";
}

/** The active revision is the newest one that is DEPLOYED now. */
function activeRevisionId(record: DeploymentRecord, now: number, timing: Timing): string | null {
  for (let i = record.revisions.length - 1; i >= 0; i--) {
    const revision = record.revisions[i] as RevisionRecord;
    if (revisionStateAt(revision, now, timing.revisionMs).status === "DEPLOYED") return revision.id;
  }
  return null;
}

/** The API form (spec 2.1): every documented field present, null when unset, secrets masked. */
export function formatDeployment(
  record: DeploymentRecord,
  now: number,
  timing: Timing,
  baseUrl: string,
): Deployment {
  return { ...formatStoredPart(record, baseUrl), ...formatLivePart(record, now, timing) };
}

/** The fields that change only when the record does (render.ts caches their JSON per version). */
export function formatStoredPart(record: DeploymentRecord, baseUrl: string) {
  const sourceConfig: Record<string, unknown> = {};
  for (const key of SOURCE_CONFIG_KEYS) sourceConfig[key] = record.sourceConfig[key] ?? null;
  sourceConfig.resource_spec = everyResourceField(record.sourceConfig.resource_spec);
  const listenerConfig = record.sourceConfig.listener_config;
  // A model as pydantic dumps it: its one field, null when unset (`{}` was answered `{}`).
  if (listenerConfig) sourceConfig.listener_config = { k8s_namespace: listenerConfig.k8s_namespace ?? null };
  if (record.source === "gitrepo") sourceConfig.custom_url = customUrlOf(baseUrl, record.id);
  const revisionConfig: Record<string, unknown> = {};
  for (const key of REVISION_CONFIG_KEYS) revisionConfig[key] = record.sourceRevisionConfig[key] ?? null;
  return {
    id: record.id,
    tenant_id: record.tenantId,
    name: record.name,
    source: record.source,
    source_config: sourceConfig,
    source_revision_config: revisionConfig,
    secrets: record.secretNames.map((name) => ({ name, value: MASKED_SECRET_VALUE })),
    secret_references: record.secretReferences,
    created_at: new Date(record.createdAt).toISOString(),
    updated_at: new Date(record.updatedAt).toISOString(),
  };
}

/** The fields that also change with time: status and the active revision. */
export function formatLivePart(record: DeploymentRecord, now: number, timing: Timing) {
  return {
    status: deploymentStatus(record, now, timing),
    latest_revision_id: record.revisions.at(-1)?.id ?? null,
    active_revision_id: activeRevisionId(record, now, timing),
    image_version: null,
  };
}

const RESOURCE_SPEC_KEYS = Object.keys(ResourceSpec.properties);

/** Every field of spec 2.4's ResourceSpec, null when unset, as a pydantic model dumps it. */
function everyResourceField(spec: ResourceSpec | null | undefined): Record<string, unknown> | null {
  if (!spec) return null;
  const stored = spec as Record<string, unknown>;
  const full: Record<string, unknown> = {};
  for (const key of RESOURCE_SPEC_KEYS) full[key] = stored[key] ?? null;
  return full;
}

export const customUrlOf = (baseUrl: string, id: string) => `${baseUrl}/agents/${id}`;
