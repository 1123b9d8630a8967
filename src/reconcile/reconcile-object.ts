import { driftFields, withoutDrift } from "../diff/three-way.js";
import type { Logger } from "../logger.js";
import type { LoadedManifest } from "../manifest/types.js";
import type { Deployment } from "../schema/deployment.js";
import type { ReconcileContext, ReconcileOutcome, ReconcileReason } from "./object/reconcile-types.js";
import { planObject } from "./object/plan-live-object.js";
import { reportDrift, warnDriftAndConflicts } from "./object/object-drift.js";
import { applyObject, refuseCreate } from "./object/apply-object.js";

export type { ReconcileContext, ReconcileOutcome, ReconcileReason } from "./object/reconcile-types.js";

// The controller's reconcile of one object, with the per-object steps of `plumb plan`
// (plan/plan-object.ts) and the replace → apply → prune sequence of `plumb apply` (apply-changes.ts):
// resolve secrets and digest an internal_source directory, read this object's live state, plan,
// then apply (a change, or drift with --self-heal; an upload is packed and sent first) or report
// (drift without --self-heal). Its steps are object/: plan-live-object.ts, object-drift.ts and
// apply-object.ts; its shapes object/reconcile-types.ts.

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
