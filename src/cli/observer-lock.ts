import { existsSync } from "node:fs";
import { acquireStateLock, lockTargetOf } from "../lock/index.js";
import { checkStoreInsideDir } from "../controller/source/store-inside-dir.js";
import { PlumbError } from "../errors.js";
import { manifestDirOf } from "../git/status/status-source.js";
import type { PushFence } from "../git/fenced-push.js";
import type { ConnectionFlags } from "./options.js";

// `drift` and `status` refresh the status records, and write them only through the state lock
// apply and the controller write through (docs/status.md "Who writes records"). When another writer
// holds it past --lock-timeout they still report, to their own output only: no record, no publish.

export type ObserverLock = {
  /** True while this run holds the lock: records may be written and published. */
  writes: () => boolean;
  release: () => Promise<void>;
  /** The lock's hold on a status-branch push (renews the lease in the same push); absent: read-only. */
  pushFence?: PushFence;
};

/** Takes the state lock for an observer, waiting up to --lock-timeout; held elsewhere → read-only. */
export async function takeObserverLock(
  path: string,
  flags: Pick<ConnectionFlags, "statusDir" | "statusBranch" | "environment"> & {
    lockTimeout?: number | undefined;
  },
  command: string,
  stderr: { write(text: string): unknown },
): Promise<ObserverLock> {
  // A PATH that does not exist is reported as such by the load; the lock must not create it.
  if (!flags.statusDir && !existsSync(path)) return { writes: () => false, release: async () => undefined };
  await checkStoreInsideDir(manifestDirOf(path), flags.statusDir, "command"); // as withStateLock
  const target = lockTargetOf({
    root: path,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    environment: flags.environment,
  });
  try {
    const say = (line: string) => stderr.write(`plumb: ${line}\n`); // a lock not trusted
    const lock = await acquireStateLock(target, { command, timeoutMs: flags.lockTimeout ?? 0, say });
    // The lock's fence: a run paused past its lease (or whose lock was forced) writes nothing more.
    const writes = () => {
      try {
        lock.assertHeld();
        return true;
      } catch {
        return false;
      }
    };
    return { writes, release: () => lock.release(), pushFence: lock.pushFence };
  } catch (error) {
    if (!(error instanceof PlumbError) || error.code !== "state-locked") throw error;
    stderr.write(
      `plumb: ${command} reports only: status records not written (${error.message.split(";")[0]}); pass --lock-timeout to wait for it\n`,
    );
    return { writes: () => false, release: async () => undefined };
  }
}
