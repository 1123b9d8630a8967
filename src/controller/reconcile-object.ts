import type { ControlPlaneClient } from "../api/control-plane-client.js";
import type { PlatformClient } from "../api/platform-client.js";
import type { Clock } from "../clock.js";
import { buildPlan } from "../diff/build-plan.js";
import type { PlannedChange } from "../diff/plan-types.js";
import type { Logger } from "../logger.js";
import type { LoadedManifest } from "../manifest/types.js";
import { applyPlan } from "../reconcile/apply.js";
import type { ApplyResult } from "../reconcile/apply-types.js";
import { buildDriftReport, type DriftReason } from "../reconcile/drift.js";
import type { ApplyPorts } from "../reconcile/ports.js";
import { resolveDesiredObject } from "../reconcile/resolve-desired.js";
import { applySource } from "../reconcile/session.js";
import { refreshStatuses } from "../reconcile/status-refresh.js";
import { manifestDigest } from "../reconcile/status-record.js";
import { type ObjectStatus, statusKey } from "../reconcile/status-types.js";
import type { Deployment, RevisionStatus } from "../schema/deployment.js";
import type { WorkReason } from "./schedule.js";

// One object's reconcile, with the same engine as `plumb apply`: resolve secrets and digest an
// internal_source directory, read this object's live state, plan, then apply (a change, or drift with
// --self-heal; an upload is packed and sent first) or report (drift without --self-heal).

export type ReconcileContext = {
  root: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  ports: ApplyPorts & { controlPlane: ControlPlaneClient };
  platform: Pick<PlatformClient, "getOrganization">;
  /** The in-memory status store; `record` keeps it and the files in step. */
  statuses: ReadonlyMap<string, ObjectStatus>;
  record(status: ObjectStatus): Promise<void>;
  gitCommit(): string | null;
  selfHeal: boolean;
  timeoutMs: number;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
  agentUrlFallback?: ((deployment: Deployment) => string | null) | undefined;
};

export type ReconcileOutcome = {
  /** False when the object should be retried with backoff. */
  ok: boolean;
  action: PlannedChange["action"];
  /** What happened: applied, in-sync, drift-reported, skipped, failed, interrupted, timeout. */
  result: string;
  drift: DriftReason | null;
  apply: ApplyResult | null;
};

/**
 * `known`: this deployment's live state from a recent listing (a drift sweep), so a sweep costs one
 * listing instead of one lookup per object; undefined means look it up now.
 */
export async function reconcileObject(
  ctx: ReconcileContext,
  loaded: LoadedManifest,
  reason: WorkReason,
  log: Logger,
  signal: AbortSignal,
  known?: Deployment | null,
): Promise<ReconcileOutcome> {
  const { manifest } = loaded;
  const key = statusKey(manifest.kind, manifest.metadata.name);
  const desired = await resolveDesiredObject(loaded, { root: ctx.root, env: ctx.env });
  const deployment =
    manifest.kind !== "Deployment"
      ? null
      : known !== undefined
        ? known
        : await ctx.ports.deployments.findDeploymentByName(manifest.metadata.name, { signal });
  const organization =
    manifest.kind === "OrganizationAccess" ? await ctx.platform.getOrganization({ signal }) : undefined;
  const live = { deployments: deployment ? [deployment] : [], ...(organization ? { organization } : {}) };
  const previous = ctx.statuses.get(key);
  const plan = buildPlan({
    desired: [desired],
    live,
    fingerprints: () => previous?.secret_fingerprints ?? undefined,
    sources: () => previous?.source_upload ?? undefined,
  });
  const change = plan.changes[0]!;
  const store = { objects: new Map(previous ? [[key, previous]] : []), problems: [] };
  const drift = buildDriftReport(plan, store, live.deployments).items[0]?.reason ?? null;

  if (reason === "drift" && drift && !ctx.selfHeal) {
    // Report only: record what live says, leave the control plane alone.
    const latestStatuses = new Map<string, RevisionStatus>();
    for (const record of refreshStatuses({
      plan,
      store,
      live: live.deployments,
      latestStatuses,
      now: ctx.clock.now(),
    }).records)
      await ctx.record(record);
    log.warn({ drift, fields: [...change.revision_fields, ...change.in_place_fields] }, "drift detected");
    return { ok: true, action: change.action, result: "drift-reported", drift, apply: null };
  }
  if (reason === "drift" && drift) log.warn({ drift }, "drift detected: self-healing to git's version");

  const report = await applyPlan(
    ctx.ports,
    [
      {
        change,
        verify: manifest.kind === "Deployment" ? manifest.spec.verify : undefined,
        manifestDigest: manifestDigest(manifest),
        source: applySource(desired, ctx.root),
        loaded,
      },
    ],
    {
      clock: ctx.clock,
      wait: true,
      timeoutMs: ctx.timeoutMs,
      concurrency: 1,
      signal,
      live: new Map(deployment ? [[deployment.name, deployment]] : []),
      previous: new Map(previous ? [[key, previous]] : []),
      record: (status) => ctx.record(status),
      gitCommit: ctx.gitCommit(),
      agentUrlFallback: ctx.agentUrlFallback,
      ...(ctx.pollIntervalMs ? { pollIntervalMs: ctx.pollIntervalMs } : {}),
      ...(ctx.maxPollIntervalMs ? { maxPollIntervalMs: ctx.maxPollIntervalMs } : {}),
    },
  );
  const result = report.results[0]!;
  // Refused and invalid changes are not retried: only a new manifest can fix them (reported instead).
  const ok = result.outcome === "converged" || result.outcome === "sent" || result.outcome === "skipped";
  const label =
    result.outcome === "converged" ? (change.action === "noop" ? "in-sync" : "applied") : result.outcome;
  return { ok, action: change.action, result: label, drift, apply: result };
}
