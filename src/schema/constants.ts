// The plain values of the shapes (names, patterns, statuses), apart from the TypeBox modules that
// build the shapes with them: what runs imports these, and TypeBox is loaded only where a shape is
// built (the validators are compiled at build time: validators.ts).

/** Deployment names: a letter first, then letters, digits and '-', at most 63 characters. */
export const DEPLOYMENT_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9-]{0,62}$";
/** RFC 1123 DNS label (container and volume names). */
export const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";
/** C identifier (environment variable and secret names). */
export const C_IDENTIFIER_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export const API_VERSION = "plumb/v1";
export const KINDS = ["Deployment", "OrganizationAccess"] as const;
export type ManifestKind = (typeof KINDS)[number];
/** Every kind of plumb document: the managed objects (KINDS) and the Environments they run in. */
export const DOCUMENT_KINDS = [...KINDS, "Environment"] as const;

/**
 * Names of the CPU fields that the control plane rounds to one decimal place: every CPU value of
 * spec 2.4, the deprecated orchestrator_* and executor_* ones included.
 */
export const CPU_FIELDS = [
  "cpu",
  "cpu_limit",
  "queue_cpu",
  "queue_cpu_limit",
  "redis_cpu",
  "redis_cpu_limit",
  "db_cpu",
  "db_cpu_limit",
  "orchestrator_cpu",
  "orchestrator_cpu_limit",
  "executor_cpu",
  "executor_cpu_limit",
] as const;

export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];
/** Terminal failures; plumb treats INTERRUPTED as failed too (decisions.md). */
export const FAILED_REVISION_STATUSES: readonly RevisionStatus[] = [
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "INTERRUPTED",
];

/** Masked value the control plane returns in place of every secret value. */
export const MASKED_SECRET_VALUE = "********";
