import type { PlannedChange } from "../diff/plan/plan-types.js";
import type { Deployment } from "../schema/deployment.js";
import type { ApplyPorts } from "./ports.js";

// Ctrl-C or SIGTERM can cut a request short after the server carried it out (the response was on
// its way). "Records what was sent" then means finding out, with one short look: the run's own
// signal is already aborted, so the look gets its own time limit.

export type InterruptedSend =
  /** Carried out: the deployment as it is now. */
  | { carriedOut: true; deployment: Deployment }
  /** Not carried out: nothing to record. */
  | { carriedOut: false }
  /** Could not tell (an in-place PATCH, or the look failed). */
  | { carriedOut: null };

const INTERRUPT_LOOKUP_MS = 5_000;

export async function findOutInterruptedSend(
  ports: ApplyPorts,
  change: PlannedChange,
  before: Deployment | null,
  timeoutMs = INTERRUPT_LOOKUP_MS,
): Promise<InterruptedSend> {
  if (change.kind !== "Deployment") return { carriedOut: null };
  const options = { signal: AbortSignal.timeout(timeoutMs) };
  try {
    if (change.action === "create") {
      const found = await ports.deployments.findDeploymentByName(change.name, options);
      return found ? { carriedOut: true, deployment: found } : { carriedOut: false };
    }
    // An in-place PATCH leaves no trace to compare; a revision-creating one moves latest_revision_id.
    if (!change.id || !change.new_revision || !before) return { carriedOut: null };
    const now = await ports.deployments.getDeployment(change.id, options);
    if (!now) return { carriedOut: null };
    return now.latest_revision_id !== before.latest_revision_id
      ? { carriedOut: true, deployment: now }
      : { carriedOut: false };
  } catch {
    return { carriedOut: null };
  }
}
