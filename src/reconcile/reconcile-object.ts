import type { ControlPlaneClient } from "../api/control-plane-client.js";
import type { PlatformClient } from "../api/platform-client.js";
import type { SecretRedactor } from "../api/secret-redactor.js";
import type { Clock } from "../clock.js";
import { buildPlan, type DesiredObject } from "../diff/plan/build-plan.js";
import { hideLiveSecrets } from "./plan/live-secrets.js";
import type { Plan, PlannedChange } from "../diff/plan/plan-types.js";
import { driftFields, withoutDrift } from "../diff/three-way.js";
import type { Logger } from "../logger.js";
import { PlumbError } from "../errors.js";
import type { LoadedManifest } from "../manifest/types.js";
import type { ServerFactsReader } from "./plan/server-facts.js";
import {
  buildApplyObject,
  lastAppliedOf,
  checkRecordedSecrets,
  findRefusedCreates,
  settleRecorded,
  forLiveDeployment,
  type TaskLimit,
} from "./plan/plan-object.js";
import type { ApplyResult } from "../apply/apply-types.js";
import { buildDriftReport, type DriftReason } from "./drift.js";
import type { ApplyPorts } from "../apply/ports.js";
import { resolveDesiredObject } from "./plan/resolve-desired.js";
import { refreshStatuses } from "./status-refresh.js";
import { applyChanges } from "./apply-changes.js";
import { type ObjectStatus, statusKey } from "../status/status-types.js";
import type { Deployment } from "../schema/deployment.js";

// The controller's reconcile of one object, with the per-object steps of `plumb plan`
// (plan/plan-object.ts) and the replace → apply → prune sequence of `plumb apply` (apply-changes.ts):
// resolve secrets and digest an internal_source directory, read this object's live state, plan,
// then apply (a change, or drift with --self-heal; an upload is packed and sent first) or report
// (drift without --self-heal).

/** Why the object is reconciled: its manifest changed (or a restart), or a drift check. */
export type ReconcileReason = "change" | "drift";

export type ReconcileContext = {
  root: string;
  env: NodeJS.ProcessEnv;
  /** The controller's redactor: learns each secret value resolved, to remove it from server text. */
  redactor: SecretRedactor;
  clock: Clock;
  ports: ApplyPorts & { controlPlane: ControlPlaneClient };
  platform: Pick<PlatformClient, "getOrganization">;
  /** The in-memory status store; `record` and `forget` keep it and the files in step. */
  statuses: Pick<ReadonlyMap<string, ObjectStatus>, "get">;
  record(status: ObjectStatus): Promise<void>;
  forget(kind: string, name: string): Promise<void>;
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

/** One object planned against live: what the apply or the drift report starts from. */
type PlannedObject = {
  key: string;
  desired: DesiredObject;
  deployment: Deployment | null;
  /** The record, with a crash's write-ahead intent settled against live. */
  previous: ObjectStatus | undefined;
  plan: Plan;
  planned: PlannedChange;
  drift: DriftReason | null;
};

/**
 * `known`: this deployment's live state from a recent listing (a drift sweep), so a sweep costs one
 * listing instead of one lookup per object; undefined means look it up now.
 */
export async function reconcileObject(
  ctx: ReconcileContext,
  loaded: LoadedManifest,
  reason: ReconcileReason,
  log: Logger,
  signal: AbortSignal,
  known?: Deployment | null,
): Promise<ReconcileOutcome> {
  const object = await planObject(ctx, loaded, signal, known);
  const { planned, drift } = object;
  // Three-way (src/diff/three-way.ts): what live changed while git did not is drift, healed only with
  // --self-heal, whatever queued the object (a restart queues every object as a change).
  const change = ctx.selfHeal ? planned : withoutDrift(planned);
  const drifted = driftFields(planned).map((f) => f.field);
  warnDriftAndConflicts(log, planned, change, drifted, ctx.selfHeal);
  if (((reason === "drift" && drift) || (drifted.length > 0 && change.action === "noop")) && !ctx.selfHeal)
    return reportDrift(ctx, object, log);
  if (reason === "drift" && drift)
    log.warn(
      { drift, fields: [...change.revision_fields, ...change.in_place_fields] },
      "drift detected: self-healing to git's version",
    );
  if (change.action === "create" && ctx.server) await refuseCreate(ctx.server, loaded, object, signal);
  return applyObject(ctx, object, change, signal);
}

/** The same per-object steps as `plumb plan`: fingerprints checked while live is read, intent settled. */
async function planObject(
  ctx: ReconcileContext,
  loaded: LoadedManifest,
  signal: AbortSignal,
  known: Deployment | null | undefined,
): Promise<PlannedObject> {
  const { manifest } = loaded;
  const key = statusKey(manifest.kind, manifest.metadata.name);
  const { root, env, redactor, secretFiles } = ctx;
  const desired = await resolveDesiredObject(loaded, { root, env, redactor, secretFiles });
  const recorded = ctx.statuses.get(key);
  // The fingerprint checks run on the threadpool while live state is read; then a crash's
  // write-ahead intent is settled against live.
  const [{ deployment, organization }, checkedRecorded] = await Promise.all([
    readLive(ctx, manifest.kind, manifest.metadata.name, signal, known),
    checkRecordedSecrets(desired, recorded, ctx.fingerprintLimit),
  ]);
  const settled = await settleRecorded(desired, recorded, checkedRecorded, deployment, ctx.fingerprintLimit);
  const { previous, checked } = forLiveDeployment(settled, deployment);
  const live = { deployments: deployment ? [deployment] : [], ...(organization ? { organization } : {}) };
  const plan = hideLiveSecrets(
    buildPlan({
      desired: [desired],
      live,
      fingerprints: () => checked ?? previous?.secret_fingerprints ?? undefined,
      sources: () => previous?.source_upload ?? undefined,
      applied: () => lastAppliedOf(previous, desired.loaded.manifest),
    }),
    redactor,
  );
  const drift = buildDriftReport(plan, storeOf(key, previous), live.deployments).items[0]?.reason ?? null;
  return { key, desired, deployment, previous, plan, planned: plan.changes[0]!, drift };
}

const storeOf = (key: string, previous: ObjectStatus | undefined) => ({
  objects: new Map(previous ? [[key, previous]] : []),
  problems: [],
});

/** The log line for fields held because the record does not say what plumb last applied. */
const UNKNOWN_BASE_KEPT =
  "unknown base: kept live's value (the record does not say what plumb last applied; plumb apply or --self-heal sends git's)";

/** The held fields (driftFields) by origin: live moved since the last apply, or base unknown. */
function heldByOrigin(change: PlannedChange): { drift: string[]; unknown: string[] } {
  const held = driftFields(change);
  return {
    drift: held.filter((f) => f.origin === "drift").map((f) => f.field),
    unknown: held.filter((f) => f.origin === "unknown").map((f) => f.field),
  };
}

function warnDriftAndConflicts(
  log: Logger,
  planned: PlannedChange,
  change: PlannedChange,
  drifted: readonly string[],
  selfHeal: boolean,
): void {
  if (drifted.length > 0 && !selfHeal && change.action === "update") {
    const { drift, unknown } = heldByOrigin(planned);
    if (drift.length > 0)
      log.warn(
        { drift: "differs", fields: drift },
        "drift detected: kept live's value, applying git's changes",
      );
    if (unknown.length > 0) log.warn({ fields: unknown }, UNKNOWN_BASE_KEPT);
  }
  const conflicts = (planned.fields ?? []).filter((f) => f.origin === "conflict").map((f) => f.field);
  if (conflicts.length > 0)
    log.warn(
      { fields: conflicts },
      "conflict: git and live both changed since the last apply; applying git's",
    );
}

/** Report only: record what live says, leave the control plane alone. */
async function reportDrift(ctx: ReconcileContext, object: PlannedObject, log: Logger) {
  const { plan, planned, drift } = object;
  const refreshed = refreshStatuses({
    plan,
    store: storeOf(object.key, object.previous),
    live: object.deployment ? [object.deployment] : [],
    latestStatuses: new Map(),
    now: ctx.clock.now(),
  });
  for (const record of refreshed.records) await ctx.record(record);
  const fields = [...planned.revision_fields, ...planned.in_place_fields];
  const { drift: drifted, unknown } = heldByOrigin(planned);
  // Fields whose base is unknown are not known to be drift: say so, not "drift detected".
  if (unknown.length > 0 && drifted.length === 0) log.warn({ fields: unknown }, UNKNOWN_BASE_KEPT);
  else log.warn({ drift, fields }, "drift detected");
  const result = "drift-reported";
  return { ok: true, action: planned.action, result, drift, apply: null, change: planned };
}

/** A create the installation would refuse (docs/plan.md "Installation rules") is not sent. */
async function refuseCreate(
  server: ServerFactsReader,
  loaded: LoadedManifest,
  object: PlannedObject,
  signal: AbortSignal,
): Promise<void> {
  const live = object.deployment ? [object.deployment] : [];
  const refused = await findRefusedCreates(server, [loaded], live, signal);
  if (refused.length > 0)
    throw new PlumbError(
      "create-refused",
      refused.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message} [${p.code}]`).join("; "),
    );
}

/** The engine's input exactly as `plumb apply` builds it, through the same sequence. */
async function applyObject(
  ctx: ReconcileContext,
  object: PlannedObject,
  change: PlannedChange,
  signal: AbortSignal,
): Promise<ReconcileOutcome> {
  const { deployment, previous } = object;
  const run = {
    plan: { ...object.plan, changes: [change] },
    objects: [buildApplyObject(change, object.desired, ctx.root)],
    live: deployment ? [deployment] : [],
  };
  const settings = {
    clock: ctx.clock,
    wait: true,
    timeoutMs: ctx.timeoutMs,
    concurrency: 1,
    signal,
    gitCommit: ctx.gitCommit(),
    agentUrlFallback: ctx.agentUrlFallback,
    pollIntervalMs: ctx.pollIntervalMs,
    maxPollIntervalMs: ctx.maxPollIntervalMs,
  };
  const records = {
    previous: storeOf(object.key, previous).objects,
    record: (status: ObjectStatus) => ctx.record(status),
    forget: (kind: string, name: string) => ctx.forget(kind, name),
  };
  const { report } = await applyChanges(ctx.ports, run, settings, records);
  const result = report.results[0]!;
  // Refused and invalid changes are not retried: only a new manifest can fix them (reported instead).
  const ok = result.outcome === "converged" || result.outcome === "accepted" || result.outcome === "skipped";
  const label =
    result.outcome === "converged" ? (change.action === "noop" ? "in-sync" : "applied") : result.outcome;
  return { ok, action: change.action, result: label, drift: object.drift, apply: result, change };
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
