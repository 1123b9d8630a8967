import type { Logger } from "../logger.js";
import type { ControllerHttp } from "./http/http-server.js";
import type { ManifestSource } from "./source/manifest-source.js";
import type { SnapshotScanner } from "./snapshot/snapshot-scanner.js";
import type { StatusBook } from "./status-book.js";
import type { WorkQueue } from "./queue/work-queue.js";

// SIGTERM/SIGINT: stop the triggers, let the running scan and reconciles finish (aborting them after
// graceMs: what was sent is recorded, and they resume on the next start), publish status, close.
// After losing the state lock nothing is recorded or published (status-book.ts's fence).
// HTTP stays up until status is saved so probes see the controller until the end.

export async function stopController(parts: {
  graceMs: number;
  log: Logger;
  triggers: { stop(): Promise<void> };
  scanner: Pick<SnapshotScanner, "settled">;
  queue: Pick<WorkQueue, "stop">;
  book: Pick<StatusBook, "flush" | "statuses">;
  /** The state lock: released once status is saved (a standby takes over at once), before git credentials go. */
  lock: { release(): Promise<void>; lost: AbortSignal };
  http: ControllerHttp | undefined;
  source: Pick<ManifestSource, "close">;
}): Promise<void> {
  const { log } = parts;
  log.info({ grace_ms: parts.graceMs }, "stopping: no new work");
  await parts.triggers.stop();
  await parts.scanner.settled();
  if (!(await parts.queue.stop(parts.graceMs)))
    log.warn({}, "some reconciles did not finish in time; they resume on the next start");
  // The book writes and publishes nothing once the lock is lost (its fence): the store is the new leader's.
  await parts.book.flush();
  await parts.lock.release();
  await parts.http?.close();
  await parts.source.close();
  if (parts.lock.lost.aborted) log.warn({}, "stopped after losing the state lock; nothing more recorded");
  else log.info({ objects: parts.book.statuses.size }, "stopped; status saved");
}
