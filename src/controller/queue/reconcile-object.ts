import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import type { PlatformClient } from "../../api/platform-client.js";
import type { SecretRedactor } from "../../api/secret-redactor.js";
import type { Clock } from "../../clock.js";
import { buildPlan } from "../../diff/plan/build-plan.js";
import type { PlannedChange } from "../../diff/plan/plan-types.js";
import { driftFields, withoutDrift } from "../../diff/three-way.js";
import type { Logger } from "../../logger.js";
import { PlumbError } from "../../errors.js";
import type { LoadedManifest } from "../../manifest/types.js";
import type { ServerFactsReader } from "../../reconcile/server-facts.js";
import {
  buildApplyObject,
  lastAppliedOf,
  checkRecordedSecrets,
  findRefusedCreates,
  settleRecorded,
  type TaskLimit,
} from "../../reconcile/plan/plan-object.js";
import { applyPlan } from "../../apply/apply.js";
import type { ApplyResult } from "../../apply/apply-types.js";
import { buildDriftReport, type DriftReason } from "../../reconcile/drift.js";
import type { ApplyPorts } from "../../apply/ports.js";
import { resolveDesiredObject } from "../../reconcile/plan/resolve-desired.js";
import { refreshStatuses } from "../../reconcile/status-refresh.js";
import { type ObjectStatus, statusKey } from "../../status/status-types.js";
import type { Deployment } from "../../schema/deployment.js";
import type { RevisionStatus } from "../../schema/revision.js";
import type { WorkReason } from "./schedule.js";

// One object's reconcile, with the same engine as `plumb apply`: resolve secrets and digest an
// internal_source directory, read this object's live state, plan, then apply (a change, or drift with
// --self-heal; an upload is packed and sent first) or report (drift without --self-heal).

export type ReconcileContext = {
  root: string;
  env: NodeJS.ProcessEnv;
  /** The controller's redactor: learns each secret value resolved, to remove it from server text. */
  redactor: SecretRedactor;
  clock: Clock;
  ports: ApplyPorts & { controlPlane: ControlPlaneClient };
  platform: Pick<PlatformClient, "getOrganization">;
  /** The in-memory status store; `record` keeps it and the files in step. */
  statuses: Pick<ReadonlyMap<string, ObjectStatus>, "get">;
  record(status: ObjectStatus): Promise<void>;
  gitCommit(): string | null;
  selfHeal: boolean;
  timeoutMs: number;
  pollIntervalMs?: number | undefined;
  maxPollIntervalMs?: number | undefined;
  agentUrlFallback?: ((deployment: Deployment) => string | null) | undefined;
  /** Reads the installation's create rules (mode, integrations, listeners), checked before a create. */
  server?: ServerFactsReader | undefined;
  /** Bounds the scrypt fingerprint checks in flight across reconciles (libuv's threadpool is shared). */
  fingerprintLimit?: TaskLimit | undefined;
  /** Real paths of every manifest's `valueFrom.file` secrets (the snapshot's): never uploaded. */
  secretFiles?: ReadonlySet<string> | undefined;
};

export type ReconcileOutcome = {
  /** False when the object should be retried with backoff. */
  ok: boolean;
  action: PlannedChange["action"];
  /** What happened: applied, in-sync, drift-reported, skipped, failed, interrupted, timeout. */
  result: string;
  drift: DriftReason | null;
  apply: ApplyResult | null;
  /** The plan of this reconcile (the status page shows it, redacted). */
  change: PlannedChange;
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
  const desired = await resolveDesiredObject(loaded, {
    root: ctx.root,
    env: ctx.env,
    redactor: ctx.redactor,
    secretFiles: ctx.secretFiles,
  });
  const recorded = ctx.statuses.get(key);
  // The same per-object steps as `plumb plan` (plan-object.ts): the fingerprint checks run on the
  // threadpool while live state is read; then a crash's write-ahead intent is settled against live.
  const [{ deployment, organization }, checkedRecorded] = await Promise.all([
    readLive(ctx, manifest.kind, manifest.metadata.name, signal, known),
    checkRecordedSecrets(desired, recorded, ctx.fingerprintLimit),
  ]);
  const { previous, checked } = await settleRecorded(
    desired,
    recorded,
    checkedRecorded,
    deployment,
    ctx.fingerprintLimit,
  );
  const live = { deployments: deployment ? [deployment] : [], ...(organization ? { organization } : {}) };
  const plan = buildPlan({
    desired: [desired],
    live,
    fingerprints: () => checked ?? previous?.secret_fingerprints ?? undefined,
    sources: () => previous?.source_upload ?? undefined,
    applied: () => lastAppliedOf(previous, desired.loaded.manifest),
  });
  const planned = plan.changes[0]!;
  const store = { objects: new Map(previous ? [[key, previous]] : []), problems: [] };
  const drift = buildDriftReport(plan, store, live.deployments).items[0]?.reason ?? null;
  // Three-way (src/diff/three-way.ts): what live changed while git did not is drift, healed only with
  // --self-heal, whatever queued the object (a restart queues every object as a change).
  const change = ctx.selfHeal ? planned : withoutDrift(planned);
  const drifted = driftFields(planned).map((f) => f.field);
  if (drifted.length > 0 && !ctx.selfHeal && change.action === "update")
    log.warn(
      { drift: "differs", fields: drifted },
      "drift detected: kept live's value, applying git's changes",
    );
  const conflicts = (planned.fields ?? []).filter((f) => f.origin === "conflict").map((f) => f.field);
  if (conflicts.length > 0)
    log.warn(
      { fields: conflicts },
      "conflict: git and live both changed since the last apply; applying git's",
    );

  if (((reason === "drift" && drift) || (drifted.length > 0 && change.action === "noop")) && !ctx.selfHeal) {
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
    log.warn({ drift, fields: [...planned.revision_fields, ...planned.in_place_fields] }, "drift detected");
    return {
      ok: true,
      action: planned.action,
      result: "drift-reported",
      drift,
      apply: null,
      change: planned,
    };
  }
  if (reason === "drift" && drift)
    log.warn(
      { drift, fields: [...change.revision_fields, ...change.in_place_fields] },
      "drift detected: self-healing to git's version",
    );

  if (change.action === "create" && ctx.server) {
    const refused = await findRefusedCreates(ctx.server, [loaded], live.deployments, signal);
    if (refused.length > 0)
      throw new PlumbError(
        "create-refused",
        refused.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message} [${p.code}]`).join("; "),
      );
  }

  // The engine's input exactly as `plumb apply` builds it (verify spec, manifest digest, source to pack).
  const report = await applyPlan(ctx.ports, [buildApplyObject(change, desired, ctx.root)], {
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
  });
  const result = report.results[0]!;
  // Refused and invalid changes are not retried: only a new manifest can fix them (reported instead).
  const ok = result.outcome === "converged" || result.outcome === "accepted" || result.outcome === "skipped";
  const label =
    result.outcome === "converged" ? (change.action === "noop" ? "in-sync" : "applied") : result.outcome;
  return { ok, action: change.action, result: label, drift, apply: result, change };
}

/** This object's live state: `known` from a listing, else a lookup (and the organization settings). */
async function readLive(
  ctx: ReconcileContext,
  kind: LoadedManifest["manifest"]["kind"],
  name: string,
  signal: AbortSignal,
  known: Deployment | null | undefined,
) {
  const deployment =
    kind !== "Deployment"
      ? null
      : known !== undefined
        ? known
        : await ctx.ports.deployments.findDeploymentByName(name, { signal });
  const organization =
    kind === "OrganizationAccess" ? await ctx.platform.getOrganization({ signal }) : undefined;
  return { deployment, organization };
}
