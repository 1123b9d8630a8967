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

/**
 * The resource_spec fields the control plane fills when absent (spec 2.4), each from another field
 * times a factor, in dependency order: queue_cpu is filled before queue_cpu_limit derives from it.
 */
export const RESOURCE_DEFAULTS: ReadonlyArray<{ field: string; from: string; factor: number }> = [
  { field: "cpu_limit", from: "cpu", factor: 2 },
  { field: "memory_limit_mb", from: "memory_mb", factor: 2 },
  { field: "queue_min_scale", from: "min_scale", factor: 1 },
  { field: "queue_max_scale", from: "max_scale", factor: 1 },
  { field: "queue_cpu", from: "cpu", factor: 1 },
  { field: "queue_memory_mb", from: "memory_mb", factor: 1 },
  { field: "queue_cpu_limit", from: "queue_cpu", factor: 2 },
  { field: "queue_memory_limit_mb", from: "queue_memory_mb", factor: 2 },
  { field: "redis_cpu_limit", from: "redis_cpu", factor: 2 },
  { field: "redis_memory_limit_mb", from: "redis_memory_mb", factor: 1 },
  { field: "db_cpu_limit", from: "db_cpu", factor: 2 },
  { field: "db_memory_limit_mb", from: "db_memory_mb", factor: 2 },
];

/**
 * Pairs of resource_spec fields Kubernetes orders, [lower, upper]: a minimum of replicas at most
 * its maximum, a request at most its limit. The deprecated fields are not deployed, so not here.
 */
export const RESOURCE_ORDERED_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ["min_scale", "max_scale"],
  ["queue_min_scale", "queue_max_scale"],
  ["cpu", "cpu_limit"],
  ["memory_mb", "memory_limit_mb"],
  ["queue_cpu", "queue_cpu_limit"],
  ["queue_memory_mb", "queue_memory_limit_mb"],
  ["redis_cpu", "redis_cpu_limit"],
  ["redis_memory_mb", "redis_memory_limit_mb"],
  ["db_cpu", "db_cpu_limit"],
  ["db_memory_mb", "db_memory_limit_mb"],
];

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
