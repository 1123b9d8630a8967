import { acquireStateLock, lockTargetOf, type StateLock } from "../lock/index.js";
import type { ConnectionFlags } from "./options.js";

/**
 * Runs `work` holding the state lock of PATH's status store (--status-dir, --status-branch), taken
 * before the store is read and released at the end; `lock.lost` aborts if another writer takes it,
 * and `lock.assertHeld` is the fence every write (request, record, push) passes first.
 */
export async function withStateLock<T>(
  path: string,
  flags: Pick<ConnectionFlags, "statusDir" | "statusBranch"> & { lockTimeout?: number | undefined },
  command: string,
  work: (lock: Pick<StateLock, "lost" | "assertHeld">) => Promise<T>,
): Promise<T> {
  const target = lockTargetOf({ root: path, statusDir: flags.statusDir, statusBranch: flags.statusBranch });
  const lock = await acquireStateLock(target, { command, timeoutMs: flags.lockTimeout ?? 0 });
  try {
    return await work(lock);
  } finally {
    await lock.release();
  }
}
