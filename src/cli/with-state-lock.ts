import { stat } from "node:fs/promises";
import { PlumbError } from "../errors.js";
import { acquireStateLock, type LockOptions, lockTargetOf, type StateLock } from "../lock/index.js";
import type { ConnectionFlags } from "./options.js";

/** The lease and clocks of the lock (tests inject a short lease and a monotonic clock they move). */
export type StateLockTiming = Pick<LockOptions, "leaseMs" | "monotonic" | "clock" | "retryMs">;

/**
 * Runs `work` holding the state lock of PATH's status store (--status-dir, --status-branch), taken
 * before the store is read and released at the end; `lock.lost` aborts if another writer takes it,
 * and `lock.assertHeld` is the fence every write (request, record, push) passes first.
 */
export async function withStateLock<T>(
  path: string,
  flags: Pick<ConnectionFlags, "statusDir" | "statusBranch" | "environment"> & {
    lockTimeout?: number | undefined;
  },
  command: string,
  work: (lock: Pick<StateLock, "lost" | "assertHeld" | "pushFence">) => Promise<T>,
  timing: StateLockTiming = {},
): Promise<T> {
  // A missing PATH is said first: taking the lock would create PATH/.plumb/ for nothing.
  if (!(await stat(path).catch(() => undefined)))
    throw new PlumbError("path-not-found", `manifest path ${path} does not exist`);
  const target = lockTargetOf({
    root: path,
    statusDir: flags.statusDir,
    statusBranch: flags.statusBranch,
    environment: flags.environment,
  });
  const lock = await acquireStateLock(target, { ...timing, command, timeoutMs: flags.lockTimeout ?? 0 });
  try {
    return await work(lock);
  } finally {
    await lock.release();
  }
}
