import type { GitStop } from "../git/stoppable-git.js";
import { lapsedWhileStopping } from "../lock/index.js";
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
  /** With --status-branch: the lock has a lease in the git remote, released through `gitStop`'s remote. */
  leased: boolean;
  /** The stop as the controller's git commands over the network see it (stoppable-git.ts). */
  gitStop: GitStop | undefined;
  http: ControllerHttp | undefined;
  source: Pick<ManifestSource, "close">;
}): Promise<void> {
  const { log } = parts;
  const lostBefore = parts.lock.lost.aborted; // lost while leading (the caller stops for it)
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
  logStopped(parts, lostBefore);
}

/** The stop's last line: what became of the status and the lock. */
function logStopped(parts: Parameters<typeof stopController>[0], lostBefore: boolean): void {
  const { log, lock, gitStop } = parts;
  const seconds = (gitStop?.afterStopMs ?? 0) / 1000;
  if (lock.lost.aborted && !lostBefore && lapsedWhileStopping(lock.lost.reason, gitStop))
    log.warn(
      {},
      `stopped as asked; the git remote did not answer within ${seconds} s of the stop, so the status branch's lease could not be renewed or released: it runs out after its duration (then a standby takes over), and the last status is in the status directory, not on the status branch (nothing is recorded once the lease ran out)`,
    );
  else if (lock.lost.aborted) log.warn({}, "stopped after losing the state lock; nothing more recorded");
  else if (parts.leased && gitStop?.unanswered)
    log.warn(
      { objects: parts.book.statuses.size },
      `stopped; status saved; the git remote did not answer within ${seconds} s of the stop, so the status branch's lease was not released: it runs out after its duration (then a standby takes over)`,
    );
  else log.info({ objects: parts.book.statuses.size }, "stopped; status saved");
}
