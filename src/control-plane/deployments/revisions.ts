import type { SourceRevisionConfig } from "../../schema/deployment.js";
import type { Revision, RevisionStatus } from "../../schema/revision.js";

// Revision lifecycle, derived from timestamps and the injected clock: no timers hold state, so a
// read at time t always sees the same status and tests with a fake clock are deterministic.

export type ForcedFailure = { status: "CREATE_FAILED" | "BUILD_FAILED" | "DEPLOY_FAILED"; message: string };

export type RevisionRecord = {
  id: string;
  /** Source this revision was built from (the deployment's, or the patch's revision_source). */
  source: string;
  createdAt: number;
  config: SourceRevisionConfig;
  failure?: ForcedFailure;
  /** Set when a newer revision superseded this one before it reached DEPLOYING. */
  skipped?: { at: number; by: string };
  /** Set when its deployment was deleted while it was in progress (it deploys nothing more). */
  interrupted?: { at: number; message: string };
};

/** Every field of spec 2.3's SourceRevisionConfig: answers carry each one, null when unset. */
export const REVISION_CONFIG_KEYS = [
  "repo_ref",
  "graph_config_path",
  "image_uri",
  "source_tarball_path",
  "repo_commit_sha",
] as const;

const BUILDABLE_SOURCES: readonly string[] = ["gitrepo", "internal_source"];
const BUILD_STEPS: RevisionStatus[] = ["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING"];
const DEPLOY_STEPS: RevisionStatus[] = ["AWAITING_DEPLOY", "DEPLOYING"];

/** The statuses a revision passes through, ending with its terminal status. */
function revisionSteps(record: Pick<RevisionRecord, "source" | "failure">): RevisionStatus[] {
  // Container sources skip the three build states (QUEUED, AWAITING_BUILD, BUILDING).
  const build = BUILDABLE_SOURCES.includes(record.source) ? BUILD_STEPS : ["CREATING" as const];
  switch (record.failure?.status) {
    case "CREATE_FAILED":
      return ["CREATING", "CREATE_FAILED"];
    case "BUILD_FAILED":
      return [...build, "BUILD_FAILED"];
    case "DEPLOY_FAILED":
      return [...build, ...DEPLOY_STEPS, "DEPLOY_FAILED"];
    default:
      return [...build, ...DEPLOY_STEPS, "DEPLOYED"];
  }
}

// Every read computes states (a GET of a deployment looks for its active revision), so the eight
// step lists (buildable or not × how it ends) are built once, not per call.
const ENDINGS = [undefined, "CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED"] as const;
const STEP_LISTS: ReadonlyMap<string, readonly RevisionStatus[]> = new Map(
  [true, false].flatMap((buildable) =>
    ENDINGS.map((status) => [
      `${buildable}:${status ?? ""}`,
      revisionSteps({
        source: buildable ? "gitrepo" : "external_container",
        failure: status && { status, message: "" },
      }),
    ]),
  ),
);
const stepsOf = (record: Pick<RevisionRecord, "source" | "failure">) =>
  STEP_LISTS.get(`${BUILDABLE_SOURCES.includes(record.source)}:${record.failure?.status ?? ""}`) ??
  revisionSteps(record);

/** Status of a revision at `now`, and since when it has had it. */
export function revisionStateAt(record: RevisionRecord, now: number, paceMs: number) {
  if (record.skipped && now >= record.skipped.at)
    return { status: "SKIPPED" as const, since: record.skipped.at };
  if (record.interrupted && now >= record.interrupted.at)
    return { status: "INTERRUPTED" as const, since: record.interrupted.at };
  const steps = stepsOf(record);
  const last = steps.length - 1;
  const index =
    paceMs <= 0 ? last : Math.min(last, Math.max(0, Math.floor((now - record.createdAt) / paceMs)));
  return { status: steps[index] as RevisionStatus, since: record.createdAt + index * Math.max(paceMs, 0) };
}

/** True while the revision has not reached DEPLOYING nor ended: a newer revision skips it. */
const SUPERSEDABLE: ReadonlySet<string> = new Set([
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
]);

export function isSupersedable(record: RevisionRecord, now: number, paceMs: number): boolean {
  return SUPERSEDABLE.has(revisionStateAt(record, now, paceMs).status);
}

/** True while the revision has not ended: SUPERSEDABLE, or DEPLOYING. */
export function isInProgress(record: RevisionRecord, now: number, paceMs: number): boolean {
  const { status } = revisionStateAt(record, now, paceMs);
  return status === "DEPLOYING" || SUPERSEDABLE.has(status);
}

/** Forced failures for tests: a revision field containing `fail-create`, `fail-build` or `fail-deploy`. */
export function forcedFailure(config: SourceRevisionConfig): ForcedFailure | undefined {
  const text = [config.repo_ref, config.image_uri, config.graph_config_path, config.source_tarball_path]
    .filter((v): v is string => typeof v === "string")
    .join(" ");
  if (text.includes("fail-create"))
    return { status: "CREATE_FAILED", message: "Forced failure: fail-create" };
  if (text.includes("fail-build")) return { status: "BUILD_FAILED", message: "Forced failure: fail-build" };
  if (text.includes("fail-deploy"))
    return { status: "DEPLOY_FAILED", message: "Forced failure: fail-deploy" };
  return undefined;
}

/** Pairs of a resource_spec that Kubernetes orders: [lower, upper, what it calls them]. */
const ORDERED_PAIRS: ReadonlyArray<[string, string, string]> = [
  ["min_scale", "max_scale", "minReplicas must be less than or equal to maxReplicas"],
  ["queue_min_scale", "queue_max_scale", "minReplicas must be less than or equal to maxReplicas"],
  ["cpu", "cpu_limit", "a request must be less than or equal to its limit"],
  ["memory_mb", "memory_limit_mb", "a request must be less than or equal to its limit"],
  ["queue_cpu", "queue_cpu_limit", "a request must be less than or equal to its limit"],
  ["queue_memory_mb", "queue_memory_limit_mb", "a request must be less than or equal to its limit"],
  ["redis_cpu", "redis_cpu_limit", "a request must be less than or equal to its limit"],
  ["redis_memory_mb", "redis_memory_limit_mb", "a request must be less than or equal to its limit"],
  ["db_cpu", "db_cpu_limit", "a request must be less than or equal to its limit"],
  ["db_memory_mb", "db_memory_limit_mb", "a request must be less than or equal to its limit"],
];

/**
 * A resource_spec (rounded, defaults filled) that the cluster would refuse: a minimum above its
 * maximum or a request above its limit. The spec states no such rule for the API, so the request
 * is taken and the revision fails where Kubernetes checks it, at deploy: DEPLOY_FAILED, naming the
 * fields (docs/control-plane.md "Validation and errors"). The deprecated fields are not deployed.
 */
export function clusterRefusal(spec: Record<string, unknown> | null | undefined): ForcedFailure | undefined {
  if (!spec) return undefined;
  const problems = ORDERED_PAIRS.flatMap(([low, high, rule]) => {
    const [a, b] = [spec[low], spec[high]];
    return typeof a === "number" && typeof b === "number" && a > b
      ? [`resource_spec.${low} ${a} is above ${high} ${b} (Kubernetes: ${rule})`]
      : [];
  });
  if (problems.length === 0) return undefined;
  return { status: "DEPLOY_FAILED", message: `Refused by the cluster: ${problems.join("; ")}` };
}

export function formatRevision(record: RevisionRecord, now: number, paceMs: number): Revision {
  const { status, since } = revisionStateAt(record, now, paceMs);
  let message: string | null = null;
  if (status === "SKIPPED") message = `Superseded by revision ${record.skipped?.by ?? ""}`.trim();
  else if (status === "INTERRUPTED") message = record.interrupted?.message ?? null;
  else if (record.failure && status === record.failure.status) message = record.failure.message;
  return {
    id: record.id,
    status,
    source: record.source,
    created_at: new Date(record.createdAt).toISOString(),
    updated_at: new Date(since).toISOString(),
    // Every field, null when unset, as the deployment's own source_revision_config (spec 2.8: a
    // revision's source revision fields are the SourceRevisionConfig of 2.3).
    source_revision_config: Object.fromEntries(
      REVISION_CONFIG_KEYS.map((key) => [key, record.config[key] ?? null]),
    ),
    status_message: message,
  };
}
