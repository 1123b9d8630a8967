import type { PlannedChange } from "../../diff/plan/plan-types.js";
import { driftFields } from "../../diff/three-way.js";
import type { Logger } from "../../logger.js";
import { refreshStatuses } from "../status-refresh.js";
import type { PlannedObject, ReconcileContext } from "./reconcile-types.js";
import { storeOf } from "./plan-live-object.js";

// What the controller says of drift and conflicts in one object, and the drift report it records
// instead of healing (reconcile-object.ts).

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

export function warnDriftAndConflicts(
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
export async function reportDrift(ctx: ReconcileContext, object: PlannedObject, log: Logger) {
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
