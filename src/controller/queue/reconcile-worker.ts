import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { changeLines } from "../../report/format-lines.js";
import { blankObjectStatus, type ObjectStatus } from "../../status/status-types.js";
import { decideHealth } from "../../status/health.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";
import { errorMessage } from "../error-message.js";
import type { ActivityBook } from "../http/activity-book.js";
import type { LiveListing } from "../sweeps/live-listing.js";
import type { Notifier } from "../notify/notifier.js";
import { failureNotification, notificationFor } from "../notify/notify-outcome.js";
import type { ControllerMetrics } from "../http/metrics.js";
import {
  type ReconcileContext,
  type ReconcileOutcome,
  reconcileObject,
} from "../../reconcile/reconcile-object.js";
import type { WorkItem } from "./schedule.js";
import type { Worker } from "./work-queue.js";

// The queue's worker: reconciles one object from the current snapshot, then counts, logs and (on an
// unexpected error) records what happened. Every log line is bound to the object's kind, name, id,
// revision and commit, each key once (pino does not merge a child's bindings with a line's fields).

export type WorkerDeps = {
  /** Everything reconcileObject needs (statuses and record included). */
  context: ReconcileContext;
  snapshot: () => DesiredSnapshot;
  listing: Pick<LiveListing, "take" | "forget">;
  metrics: Pick<ControllerMetrics, "reconciled" | "driftDetected" | "synced">;
  /** Consecutive failures of `key` so far (for the log line of another failure). */
  failures: (key: string) => number;
  /** Called after every reconcile, success or not (readiness). */
  settled: (key: string) => void;
  /** The status page's record of each object's last reconcile. */
  activity?: Pick<ActivityBook, "record"> | undefined;
  /** --notify: outcomes worth a message (never awaited). */
  notifier?: Pick<Notifier, "notify"> | undefined;
  clock: Clock;
  log: Logger;
};

/** One reconcile as the worker follows it: the item, its object, the log bound to it, when it started. */
type Run = {
  item: WorkItem;
  kind: ObjectStatus["kind"];
  name: string;
  previous: ObjectStatus | undefined;
  bindings: {
    kind: string;
    object: string;
    id: string | null;
    revision: string | null;
    commit: string | null;
  };
  log: Logger;
  started: number;
};

export function createReconcileWorker(deps: WorkerDeps): Worker {
  const { clock, context } = deps;
  return async (item: WorkItem, signal: AbortSignal): Promise<boolean> => {
    const snapshot = deps.snapshot();
    const entry = snapshot.objects.get(item.key);
    if (!entry) {
      deps.listing.forget(item.key); // removed from the manifests (or now invalid) since it was queued
      return true;
    }
    const { kind, metadata } = entry.loaded.manifest;
    const previous = context.statuses.get(item.key);
    // `object`, not `name`: pino's own `name` key says which program wrote the line.
    const bindings = {
      kind,
      object: metadata.name,
      id: previous?.id ?? null,
      revision: previous?.latest_revision_id ?? null,
      commit: context.gitCommit(),
    };
    const run: Run = {
      item,
      kind,
      name: metadata.name,
      previous,
      bindings,
      log: deps.log.child(bindings),
      started: clock.now(),
    };
    const known = deps.listing.take(item.key);
    try {
      const withSecretFiles = { ...context, secretFiles: snapshot.secretFiles };
      const outcome = await reconcileObject(
        withSecretFiles,
        entry.loaded,
        item.reason,
        run.log,
        signal,
        known,
      );
      reportOutcome(deps, run, outcome);
      return outcome.ok;
    } catch (error) {
      await reportError(deps, run, error, signal);
      return false;
    } finally {
      deps.settled(item.key);
    }
  };
}

/** Counts, records on the status page, notifies and logs a reconcile that ran to its end. */
function reportOutcome(deps: WorkerDeps, run: Run, outcome: ReconcileOutcome): void {
  const { clock } = deps;
  const { item, bindings } = run;
  const after = deps.context.statuses.get(item.key);
  deps.metrics.reconciled(item.reason, outcome.result, (clock.now() - run.started) / 1000);
  if (outcome.drift) deps.metrics.driftDetected(run.kind, outcome.drift);
  if (outcome.ok) deps.metrics.synced(clock.now());
  deps.activity?.record(item.key, {
    at: new Date(run.started).toISOString(),
    reason: item.reason,
    result: outcome.result,
    action: outcome.action,
    duration_ms: clock.now() - run.started,
    // Only a drift check finds drift: a change's fields differ because git moved.
    drift_fields:
      item.reason === "drift" && outcome.drift
        ? [...outcome.change.revision_fields, ...outcome.change.in_place_fields]
        : [],
    plan: changeLines(outcome.change),
  });
  // A create (or a new revision) learns the id and revision now: the last line carries the new ones.
  const ended = { id: after?.id ?? bindings.id, revision: after?.latest_revision_id ?? bindings.revision };
  const event = notificationFor({
    kind: run.kind,
    name: run.name,
    reason: item.reason,
    outcome,
    failuresBefore: deps.failures(item.key),
    ...ended,
  });
  if (event) deps.notifier?.notify(event);
  const done = deps.log.child({ ...bindings, ...ended });
  const fields = {
    reason: item.reason,
    attempt: item.attempt,
    action: outcome.action,
    result: outcome.result,
    sync: after?.sync,
    health: after?.health,
    elapsed_ms: clock.now() - run.started,
  };
  if (outcome.ok && outcome.result !== "skipped") done.info(fields, "reconciled");
  else {
    const failures = deps.failures(item.key) + (outcome.ok ? 0 : 1);
    done.warn({ ...fields, error: outcome.apply?.message ?? null, failures }, "reconcile did not converge");
  }
}

/** Counts, logs, notifies and records (unless shutting down) a reconcile an error stopped. */
async function reportError(deps: WorkerDeps, run: Run, error: unknown, signal: AbortSignal): Promise<void> {
  const { clock } = deps;
  const { item, bindings, log } = run;
  deps.metrics.reconciled(item.reason, "error", (clock.now() - run.started) / 1000);
  deps.activity?.record(item.key, {
    at: new Date(run.started).toISOString(),
    reason: item.reason,
    result: "error",
    action: "not planned",
    duration_ms: clock.now() - run.started,
    drift_fields: [],
    plan: [],
  });
  log.error({ reason: item.reason, attempt: item.attempt, err: errorMessage(error) }, "reconcile failed");
  if (signal.aborted) return;
  const event = failureNotification({
    kind: run.kind,
    name: run.name,
    message: errorMessage(error),
    failuresBefore: deps.failures(item.key),
    id: bindings.id,
    revision: bindings.revision,
  });
  if (event) deps.notifier?.notify(event);
  const last = run.previous ?? blankObjectStatus(run.kind, run.name);
  await deps.context
    .record(failedRecord(last, error, clock.now()))
    .catch((recordError: unknown) => log.error({ err: errorMessage(recordError) }, "status not recorded"));
}

/**
 * The last record, now carrying the error that stopped this reconcile. Sync and health become
 * Unknown: the check failed, so nothing is known to be Synced or Healthy (a wrong key, an
 * unreachable control plane); ids, revisions and fingerprints stay as they were.
 */
const failedRecord = (previous: ObjectStatus, error: unknown, now: number): ObjectStatus => ({
  ...previous,
  sync: "Unknown",
  health: decideHealth({ seen: "error", previous }),
  last_error: errorMessage(error),
  updated_at: new Date(now).toISOString(),
});
