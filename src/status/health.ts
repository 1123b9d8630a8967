import type { Deployment } from "../schema/deployment.js";
import type { RevisionStatus } from "../schema/revision.js";
import type { HealthStatus, ObjectStatus } from "./status-types.js";

// Health, decided in one place (docs/status.md "Health"). Pure. Every writer of a status record
// says what it saw and this says what that means: apply's steps and ends (apply-steps.ts,
// apply-records.ts, apply-outcomes.ts), drift and status reading live (status-refresh.ts), adopt,
// and the controller's failed reconcile (reconcile-worker.ts).

/** Revision states that end in failure: the deployment is Degraded until another revision lands. */
const FAILED_REVISIONS: readonly RevisionStatus[] = [
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "INTERRUPTED",
];

type LiveRevisions = Pick<Deployment, "latest_revision_id" | "active_revision_id">;
type Previous = Pick<ObjectStatus, "health" | "active_revision_id"> | undefined;

/** What was seen of an object when its record is written. */
export type HealthFacts =
  /** Live read (drift, status, the controller's report-only drift): its revisions and the latest's state. */
  | { seen: "live"; deployment: LiveRevisions; latestStatus: RevisionStatus | null; previous: Previous }
  /** A recorded deployment no longer on the control plane. */
  | { seen: "gone" }
  /** An object without revisions (OrganizationAccess): it is as its settings are. */
  | { seen: "no-revisions" }
  /** apply's starting point for each object: converged as planned, until a send, wait or check says otherwise. */
  | { seen: "planned" }
  /** A request was accepted and its revision is not awaited (yet, or with --no-wait). */
  | { seen: "sent" }
  /** An apply's revision wait ended (revision-watcher.ts): DEPLOYED, a failure, or no answer. */
  | { seen: "wait"; end: RevisionStatus | "TIMEOUT" | "ABORTED" | "VANISHED" }
  /** spec.verify's checks failed on the revision (docs/apply.md "Verify"), whatever the wait said. */
  | { seen: "checks-failed" }
  /** Nothing was sent (refused, interrupted before sending, the send failed): nothing new is known. */
  | { seen: "nothing-sent"; previous: Previous }
  /** A reconcile or check stopped on an error: nothing is known to be Healthy. */
  | { seen: "error"; previous: Previous }
  /** plumb adopt: the live deployment taken over as it is. */
  | { seen: "adopted"; deployment: LiveRevisions };

const isDeployed = (d: LiveRevisions) =>
  d.latest_revision_id !== null && d.latest_revision_id === d.active_revision_id;

/** Health from live alone: the latest revision is active → Healthy; a failed one → Degraded. */
function healthOfLive(facts: Extract<HealthFacts, { seen: "live" }>): HealthStatus {
  const { deployment, latestStatus, previous } = facts;
  if (isDeployed(deployment)) {
    // A failed verify on this very revision keeps it Degraded until a check passes.
    const verifiedBad =
      previous?.health === "Degraded" && previous.active_revision_id === deployment.active_revision_id;
    return verifiedBad ? "Degraded" : "Healthy";
  }
  if (latestStatus && FAILED_REVISIONS.includes(latestStatus)) return "Degraded";
  return deployment.latest_revision_id ? "Progressing" : "Unknown";
}

/** An apply's wait: DEPLOYED is Healthy, still building Progressing, gone Unknown, a failure Degraded. */
function healthOfWait(end: Extract<HealthFacts, { seen: "wait" }>["end"]): HealthStatus {
  if (end === "DEPLOYED") return "Healthy";
  if (end === "TIMEOUT" || end === "ABORTED") return "Progressing";
  if (end === "VANISHED") return "Unknown";
  return "Degraded";
}

/** The health a status record gets from what was seen. */
export function decideHealth(facts: HealthFacts): HealthStatus {
  switch (facts.seen) {
    case "live":
      return healthOfLive(facts);
    case "gone":
      return "Unknown";
    case "no-revisions":
      return "Healthy";
    case "planned":
      return "Healthy";
    case "sent":
      return "Progressing";
    case "wait":
      return healthOfWait(facts.end);
    case "checks-failed":
      return "Degraded";
    case "nothing-sent":
      return facts.previous?.health ?? "Unknown";
    case "error":
      // A failed check proves nothing healthy; a known failure stays known.
      return facts.previous?.health === "Degraded" ? "Degraded" : "Unknown";
    case "adopted":
      return isDeployed(facts.deployment) ? "Healthy" : "Unknown";
  }
}
