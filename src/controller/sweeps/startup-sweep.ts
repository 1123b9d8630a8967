import type { Logger } from "../../logger.js";
import type { ObjectStatus } from "../../status/status-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";
import { queueListed, queueUnlisted } from "./drift-sweep.js";
import type { LiveListing } from "./live-listing.js";
import { findUnknownSecretsAtStart, warnUnknownSecrets } from "./unknown-secrets-warning.js";

// The first reconcile of everything, once the first scan is done: one listing of live streamed into
// the queue as a drift sweep streams it (each object queued as its page arrives, the next page read
// once the queue has taken most of them), then the objects that are not live. The listing is never
// held whole: a restart over 10,000 live deployments peaked at 227 MB RSS when it was read whole
// and parsed again for the unknown-secrets warning, which now needs only the names.

export type StartupSweepDeps = {
  snapshot: () => DesiredSnapshot;
  statuses: ReadonlyMap<string, ObjectStatus>;
  listing: LiveListing;
  enqueue: (key: string) => void;
  /** True once shutdown began: nothing more is queued. */
  stopping: () => boolean;
  log: Logger;
};

export async function startupSweep(deps: StartupSweepDeps): Promise<void> {
  // Nothing is queued yet: the records are as the last run left them (a new pod: none). Only which
  // of them hold fingerprints is kept: a copy of the map kept every record read at start alive beside
  // the one its reconcile wrote, until the listing ended (≈ 10 MB at 10,000 objects).
  const fingerprinted = new Set<string>();
  for (const [key, status] of deps.statuses) if (status.secret_fingerprints) fingerprinted.add(key);
  const listed = await queueListed(deps.listing, deps.snapshot, deps.enqueue);
  if (deps.stopping()) return;
  const snapshot = deps.snapshot();
  if (listed.live)
    warnUnknownSecrets(findUnknownSecretsAtStart(snapshot, listed.live, fingerprinted), deps.log);
  queueUnlisted(listed, deps.listing, snapshot, deps.enqueue);
}
