import type { Logger } from "../../logger.js";
import { type ObjectStatus, statusKey } from "../../status/status-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";
import type { LiveListing } from "./live-listing.js";
import type { ControllerMetrics } from "../http/metrics.js";
import { logInvalid } from "../snapshot/snapshot-scanner.js";

// A drift check of everything: one listing of live, each listed object's drift reconcile queued as
// its page arrives (the queue runs changes first), then a report of deployments that left git and
// a drift reconcile for each object that is not live.

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

/** A listing handed to the queue: what it queued, and the names of everything live (undefined: it failed). */
type Listed = { queued: ReadonlySet<string>; live: ReadonlySet<string> | undefined };

/**
 * Streams one listing into the queue: each listed object of the snapshot is queued as its page
 * arrives (a rescan may run meanwhile: the current snapshot is asked each time).
 */
export async function queueListed(
  listing: LiveListing,
  snapshot: () => DesiredSnapshot,
  enqueue: (key: string) => void,
): Promise<Listed> {
  const queued = new Set<string>();
  const live = await listing.stream(
    (name) => {
      const key = statusKey("Deployment", name);
      return snapshot().objects.has(key) ? key : undefined;
    },
    (key) => {
      queued.add(key);
      enqueue(key);
    },
  );
  return { queued, live };
}

/** Queues the objects the listing did not: not live (the listing says so), or looked up when it failed. */
export function queueUnlisted(
  { queued, live }: Listed,
  listing: LiveListing,
  snapshot: DesiredSnapshot,
  enqueue: (key: string) => void,
): void {
  for (const key of snapshot.objects.keys()) {
    if (queued.has(key)) continue;
    if (live) listing.use(key);
    enqueue(key);
  }
}

export function createDriftSweep(deps: DriftSweepDeps): () => Promise<void> {
  return async () => {
    if (!deps.active()) return;
    const before = deps.snapshot();
    if (before.invalid.size > 0) logInvalid(deps.log, before);
    const listed = await queueListed(deps.listing, deps.snapshot, deps.enqueue);
    if (!deps.active()) return;
    const snapshot = deps.snapshot();
    if (listed.live) {
      deps.synced?.();
      for (const status of findRemovedFromGit(snapshot, deps.statuses, listed.live)) {
        deps.metrics.driftDetected(status.kind, "removed-from-git");
        deps.log.warn(
          { kind: status.kind, object: status.name, id: status.id },
          "drift detected: live deployment no longer in git",
        );
      }
    }
    queueUnlisted(listed, deps.listing, snapshot, deps.enqueue);
  };
}
