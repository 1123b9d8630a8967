import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { PlumbError } from "../errors.js";
import {
  acquireStateLock,
  type LockOptions,
  type LockTarget,
  lockTargetOf,
  type StateLock,
} from "../lock/index.js";
import { nearbyStoresInUse } from "./nearby-locks.js";
import type { ConnectionFlags } from "./options.js";

/** The lease and clocks of the lock (tests inject a short lease and a monotonic clock they move). */
export type StateLockTiming = Pick<LockOptions, "leaseMs" | "monotonic" | "clock" | "retryMs">;

/**
 * Runs `work` holding the state lock of PATH's status store (--status-dir, --status-branch), and of
 * the stores nearby in use (nearby-locks.ts), taken before the store is read and released at the
 * end; `lock.lost` aborts if another writer takes one of them, and `lock.assertHeld` is the fence
 * every write (request, record, push) passes first.
 */
export async function withStateLock<T>(
  path: string,
  flags: Pick<ConnectionFlags, "statusDir" | "statusBranch" | "environment"> & {
    lockTimeout?: number | undefined;
    /** With environments: statusDir is the environment's default store, nearby ones still count. */
    statusDirOfEnvironment?: boolean | undefined;
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
  const options = { ...timing, command, timeoutMs: flags.lockTimeout ?? 0 };
  // The stores nearby hold objects PATH applies too (nearby-locks.ts); an explicit --status-dir
  // reads that store only, and so locks it only.
  const scan = async () =>
    !flags.statusDir || flags.statusDirOfEnvironment === true
      ? await nearbyStoresInUse(path, flags.environment)
      : [];
  const nearby = await scan();
  let locks = await lockInOrder(target, nearby, options);
  try {
    // A store nearby that another writer started using together with this one was not in use when
    // scanned: scanned again now that PATH's own lock exists, the later of the two sees the
    // other's, lets go and takes them all again in order (refused, or waiting with --lock-timeout).
    const missed = (await scan()).filter((dir) => !nearby.includes(dir));
    if (missed.length > 0) {
      await releaseAll(locks);
      locks = { own: undefined, held: [] };
      locks = await lockInOrder(target, [...nearby, ...missed], options);
    }
    const { own, held } = locks;
    return await work(held.length === 0 ? own! : allOf(own!, held));
  } finally {
    await releaseAll(locks);
  }
}

type Locks = { own: StateLock | undefined; held: StateLock[] };

/**
 * PATH's own lock and the nearby stores', all taken in one order (by path): `apply TREE` and `apply
 * TREE/sub` with --lock-timeout then wait for each other, instead of each holding its own store and
 * waiting for the other's until both time out. What was taken is let go when one is refused.
 */
async function lockInOrder(target: LockTarget, nearby: string[], options: LockOptions): Promise<Locks> {
  const ownDir = resolve(target.statusDir);
  const locks: Locks = { own: undefined, held: [] };
  try {
    for (const statusDir of nearby.filter((dir) => resolve(dir) < ownDir))
      locks.held.push(await acquireStateLock({ statusDir }, options));
    locks.own = await acquireStateLock(target, options);
    for (const statusDir of nearby.filter((dir) => resolve(dir) > ownDir))
      locks.held.push(await acquireStateLock({ statusDir }, options));
    return locks;
  } catch (error) {
    await releaseAll(locks);
    throw error;
  }
}

async function releaseAll(locks: Locks): Promise<void> {
  await locks.own?.release();
  for (const nearby of [...locks.held].reverse()) await nearby.release();
}

/** PATH's own lock, lost (and refusing writes) when any of the nearby ones is. */
function allOf(own: StateLock, nearby: StateLock[]): Pick<StateLock, "lost" | "assertHeld" | "pushFence"> {
  return {
    lost: AbortSignal.any([own.lost, ...nearby.map((n) => n.lost)]),
    assertHeld: () => {
      for (const n of nearby) n.assertHeld();
      own.assertHeld();
    },
    pushFence: own.pushFence,
  };
}
