import type { Logger } from "../logger.js";
import type { ObjectStatus } from "../status/status-types.js";
import type { DesiredSnapshot } from "./desired.js";
import type { LiveListing } from "./live-listing.js";
import type { ControllerMetrics } from "./metrics.js";
import { logInvalid } from "./snapshot-scanner.js";

// A drift check of everything: one listing of live, a report of deployments that left git, then a
// drift reconcile queued for every object (the queue runs changes first).

/**
 * Deployments plumb managed (they have a status record) that are still live but no longer in git:
 * reported, never deleted. None while some manifest is invalid: the object may be in the broken file.
 */
export function findRemovedFromGit(
  snapshot: DesiredSnapshot,
  statuses: Iterable<[string, ObjectStatus]>,
  live: { has(name: string): boolean },
): ObjectStatus[] {
  if (snapshot.invalid.size > 0) return [];
  const gone: ObjectStatus[] = [];
  for (const [key, status] of statuses)
    if (!snapshot.objects.has(key) && status.kind === "Deployment" && live.has(status.name))
      gone.push(status);
  return gone;
}

export type DriftSweepDeps = {
  snapshot: () => DesiredSnapshot;
  statuses: ReadonlyMap<string, ObjectStatus>;
  listing: LiveListing;
  enqueue: (key: string) => void;
  metrics: Pick<ControllerMetrics, "driftDetected">;
  log: Logger;
  /** False before the first reconcile finished or while stopping: the sweep is skipped. */
  active: () => boolean;
  /** Called when the sweep's listing succeeded (plumb_last_successful_sync_timestamp_seconds). */
  synced?: () => void;
};

export function createDriftSweep(deps: DriftSweepDeps): () => Promise<void> {
  return async () => {
    if (!deps.active()) return;
    const before = deps.snapshot();
    if (before.invalid.size > 0) logInvalid(deps.log, before);
    if (await deps.listing.refresh()) {
      deps.synced?.();
      const snapshot = deps.snapshot(); // a rescan may have run during the listing
      for (const key of snapshot.objects.keys()) deps.listing.use(key);
      for (const status of findRemovedFromGit(snapshot, deps.statuses, deps.listing.names())) {
        deps.metrics.driftDetected(status.kind, "removed-from-git");
        deps.log.warn(
          { kind: status.kind, object: status.name, id: status.id },
          "drift detected: live deployment no longer in git",
        );
      }
    }
    for (const key of deps.snapshot().objects.keys()) deps.enqueue(key);
  };
}
