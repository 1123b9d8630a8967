import type { NotifyEvent } from "./notify-payload.js";
import type { ReconcileOutcome } from "../../reconcile/reconcile-object.js";
import type { WorkReason } from "../queue/schedule.js";

// Which reconciles are worth a notification. Pure. A failing object is retried with backoff: only
// the first failure of a streak notifies, so a broken deployment is one message, not one a minute.

export function notificationFor(input: {
  kind: string;
  name: string;
  reason: WorkReason;
  outcome: ReconcileOutcome;
  /** Failures of this object before this reconcile (0: it was fine until now). */
  failuresBefore: number;
  id: string | null;
  revision: string | null;
}): NotifyEvent | null {
  const { outcome } = input;
  const base = {
    object: { kind: input.kind, name: input.name },
    id: input.id,
    revision: input.revision,
    fields: [...outcome.change.revision_fields, ...outcome.change.in_place_fields],
  };
  if (outcome.result === "drift-reported")
    return {
      ...base,
      event: "drift-detected",
      message: `live differs from git (${outcome.drift ?? "drift"})`,
    };
  if (outcome.result === "applied")
    return input.reason === "drift" && outcome.drift
      ? { ...base, event: "drift-healed", message: "git's version re-applied" }
      : {
          ...base,
          event: "applied",
          message: outcome.action === "create" ? "created" : "updated and converged",
        };
  // Shutdown interrupts are resumed on the next start: not a failure anyone must act on.
  if (!outcome.ok && outcome.result !== "interrupted" && input.failuresBefore === 0)
    return { ...base, event: "failed", message: outcome.apply?.message ?? outcome.result };
  return null;
}

/** A reconcile that threw (wrong key, unreachable control plane): first of a streak only. */
export function failureNotification(input: {
  kind: string;
  name: string;
  message: string;
  failuresBefore: number;
  id: string | null;
  revision: string | null;
}): NotifyEvent | null {
  if (input.failuresBefore > 0) return null;
  return {
    event: "failed",
    object: { kind: input.kind, name: input.name },
    id: input.id,
    revision: input.revision,
    fields: [],
    message: input.message,
  };
}
