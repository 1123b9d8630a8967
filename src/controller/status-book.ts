import type { Logger } from "../logger.js";
import { loadStatus, publishStatus, resolveStatusDir, type StatusLocation } from "../status/status-source.js";
import { removeObjectStatus, saveObjectStatus } from "../status/status-store.js";
import { type ObjectStatus, statusKey } from "../status/status-types.js";
import { errorMessage } from "./error-message.js";
import type { Timers } from "./work-queue.js";

// The controller's status records: in memory for /status and metrics, each written atomically to
// the status directory as soon as it is known (kill -9 loses nothing recorded), and, with
// --status-branch, published to git a little later in batches.

export type StatusBook = {
  statuses: ReadonlyMap<string, ObjectStatus>;
  record: (status: ObjectStatus) => Promise<void>;
  /** Drops an object's record (it was pruned): memory, file, and the status branch later. */
  forget: (kind: string, name: string) => Promise<void>;
  /** Publishes what is pending to the status branch now and waits for every publish (shutdown). */
  flush: () => Promise<void>;
};

export type StatusBookOptions = {
  /** Where status lives; its gitEnv (credentials) is used for the status branch. */
  location: StatusLocation;
  timers: Timers;
  log: Logger;
  /** Quiet time that batches records into one status-branch commit. */
  publishDelayMs?: number;
  /** Called with the key of every record written or forgotten (the status page's live updates). */
  onChange?: (key: string) => void;
  /**
   * The state lock's fence (StateLock.assertHeld): throws lock-lost once the lease lapsed. A
   * controller that lost the lock writes no record and publishes nothing.
   */
  fence?: () => void;
};

export async function openStatusBook(options: StatusBookOptions): Promise<StatusBook> {
  const { location, log } = options;
  const statuses = new Map<string, ObjectStatus>();
  const statusDir = resolveStatusDir(location);
  const loaded = await loadStatus(location);
  for (const problem of loaded.problems)
    log.warn({ file: problem.file, reason: problem.message }, "ignoring status file");
  for (const [key, status] of loaded.objects) statuses.set(key, status);

  const fence = options.fence ?? (() => undefined);
  const held = () => {
    try {
      fence();
      return true;
    } catch {
      return false;
    }
  };
  let cancelPublish: (() => void) | undefined;
  let publishing: Promise<void> = Promise.resolve();
  const publish = () => {
    cancelPublish = undefined;
    publishing = publishing
      // Checked again immediately before the push (status-branch.ts).
      .then(() => publishStatus(location, "plumb controller: status", fence))
      .then(
        () => undefined,
        (error: unknown) => log.error({ err: errorMessage(error) }, "status branch not published"),
      );
    return publishing;
  };

  // Records that change within the quiet time go to the status branch in one commit.
  const publishSoon = () => {
    if (location.statusBranch && !cancelPublish)
      cancelPublish = options.timers.setTimeout(() => void publish(), options.publishDelayMs ?? 2_000);
  };

  return {
    statuses,
    async record(status) {
      fence();
      const key = statusKey(status.kind, status.name);
      statuses.set(key, status);
      await saveObjectStatus(statusDir, status);
      options.onChange?.(key);
      publishSoon();
    },
    async forget(kind, name) {
      fence();
      statuses.delete(statusKey(kind, name));
      await removeObjectStatus(statusDir, kind, name);
      options.onChange?.(statusKey(kind, name));
      publishSoon();
    },
    async flush() {
      cancelPublish?.();
      // After losing the lock, the branch is the new leader's: this store is stale, never pushed.
      if (location.statusBranch && held()) await publish();
      else if (location.statusBranch) log.warn({}, "lost the state lock: status branch not published");
      await publishing;
    },
  };
}
