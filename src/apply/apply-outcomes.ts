import { formatChangeErrors } from "../diff/plan/change-error.js";
import type { PlannedChange } from "../diff/plan/plan-types.js";
import type { ApplyResult } from "./apply-types.js";
import type { RevisionWait } from "./revision-watcher.js";
import type { ObjectStatus } from "../status/status-types.js";
import { decideHealth } from "../status/health.js";

// Pure: how each way an object's apply can end reads in its result (health: src/status/health.ts).

type Outcome = Pick<ApplyResult, "outcome" | "sync" | "health" | "message">;

/** Nothing was sent: nothing new is known of the object's health. */
const healthBefore = (previous: ObjectStatus | undefined) => decideHealth({ seen: "nothing-sent", previous });

/** Refused or invalid: nothing sent. */
export const skipped = (change: PlannedChange, previous: ObjectStatus | undefined): Outcome => ({
  outcome: "skipped",
  sync: "Refused",
  health: healthBefore(previous),
  message: formatChangeErrors(change.errors) || "refused",
});

/** Interrupted before anything went out. */
export const notSent = (previous: ObjectStatus | undefined): Outcome => ({
  outcome: "interrupted",
  sync: "OutOfSync",
  health: healthBefore(previous),
  message: "not sent: interrupted",
});

export const sendFailed = (previous: ObjectStatus | undefined, message: string): Outcome => ({
  outcome: "failed",
  sync: "Failed",
  health: healthBefore(previous),
  message,
});

/** --no-wait: the revision was created and is not awaited. */
export const sentNotAwaited: Pick<ApplyResult, "outcome" | "sync" | "health"> = {
  outcome: "accepted",
  sync: "Progressing",
  health: decideHealth({ seen: "sent" }),
};

/** Maps the end of a revision wait onto the result fields. */
export function outcomeOfWait(wait: RevisionWait): Outcome & Pick<ApplyResult, "revision_status"> {
  return { ...waitFields(wait), health: decideHealth({ seen: "wait", end: wait.status }) };
}

function waitFields(wait: RevisionWait): Omit<Outcome, "health"> & Pick<ApplyResult, "revision_status"> {
  switch (wait.status) {
    case "DEPLOYED":
      return {
        outcome: "converged",
        sync: "Synced",
        message: null,
        revision_status: "DEPLOYED",
      };
    case "TIMEOUT":
      return {
        outcome: "timeout",
        sync: "Progressing",
        message: "timed out waiting for the revision",
        revision_status: null,
      };
    case "ABORTED":
      return {
        outcome: "interrupted",
        sync: "Progressing",
        message: "interrupted while waiting",
        revision_status: null,
      };
    case "VANISHED":
      return {
        outcome: "failed",
        sync: "Failed",
        message: wait.statusMessage,
        revision_status: null,
      };
    default:
      return {
        outcome: "failed",
        sync: "Failed",
        message: `revision ${wait.revisionId} ${wait.status}${wait.statusMessage ? `: ${wait.statusMessage}` : ""}`,
        revision_status: wait.status,
      };
  }
}
