import { realStoreDir } from "./local/real-store.js";
import { isPlumbError } from "../errors.js";
import { acquireStateLock } from "./index.js";
import { storeUnwritableError } from "./lock-errors.js";
import type { LockOptions, LockTarget, StateLock } from "./lock-types.js";

// A writer's own store and the stores nearby that hold objects it applies too (docs/status.md
// "Stores above and below"), all locked in one order, by path: `apply TREE` and `apply TREE/sub`
// (or a controller on either) then wait for each other instead of each holding its own store and
// waiting for the other's. The commands (cli/with-state-lock.ts) and the controller (leadership.ts,
// an environment's claim) take them here.

/**
 * PATH's own lock and those of the stores `scan` finds in use nearby, in one order by path. The scan
 * is made again once they are held: a store nearby that another writer began using meanwhile was
 * not in the first scan, so all are let go and taken again in order with it. One lock that is lost
 * (and refuses writes) when any of them is, and releases them all.
 */
export async function acquireStateLocks(
  target: LockTarget,
  scan: () => Promise<string[]>,
  options: LockOptions,
): Promise<StateLock> {
  const nearby = await scan();
  let locks = await lockInOrder(target, nearby, options);
  try {
    const missed = (await scan()).filter((dir) => !nearby.includes(dir));
    if (missed.length > 0) {
      await releaseAll(locks);
      locks = { own: undefined, held: [] };
      locks = await lockInOrder(target, [...nearby, ...missed], options);
    }
  } catch (error) {
    await releaseAll(locks);
    throw error;
  }
  return allOf(locks.own!, locks.held);
}

type Locks = { own: StateLock | undefined; held: StateLock[] };

async function lockInOrder(target: LockTarget, nearby: string[], options: LockOptions): Promise<Locks> {
  // Ordered and told apart by their real paths, as their locks are keyed (real-store.ts).
  const ownDir = realStoreDir(target.statusDir);
  const others = [...new Set(nearby.map((dir) => realStoreDir(dir)))].filter((dir) => dir !== ownDir).sort();
  const locks: Locks = { own: undefined, held: [] };
  try {
    for (const statusDir of others.filter((dir) => dir < ownDir))
      locks.held.push(await acquireNearby(statusDir, options));
    locks.own = await acquireStateLock(target, options);
    for (const statusDir of others.filter((dir) => dir > ownDir))
      locks.held.push(await acquireNearby(statusDir, options));
    return locks;
  } catch (error) {
    await releaseAll(locks);
    throw error;
  }
}

/**
 * A store nearby's lock. One that cannot be taken (its directory not writable by this user, a
 * read-only file system) is not skipped: its lock is what tells this writer that no other one is
 * sending the same changes, so without it nothing is sent (nearby-store-unwritable, a setting to
 * fix: exit 64), and the message says which store, why, and what to do.
 */
async function acquireNearby(statusDir: string, options: LockOptions): Promise<StateLock> {
  try {
    return await acquireStateLock({ statusDir }, options);
  } catch (error) {
    // A failure of the disk (its cause); a lock-io-error without one already says what and the fix.
    const unwritable = isPlumbError(error) && ["lock-io-error", "store-unwritable"].includes(error.code);
    if (!unwritable || error.cause === undefined) throw error;
    throw storeUnwritableError(statusDir, error.cause, options.command);
  }
}

async function releaseAll(locks: Locks): Promise<void> {
  await locks.own?.release();
  for (const nearby of [...locks.held].reverse()) await nearby.release();
}

/** PATH's own lock, lost (and refusing writes) when any of the nearby ones is; released with them. */
function allOf(own: StateLock, nearby: StateLock[]): StateLock {
  if (nearby.length === 0) return own;
  return {
    holder: own.holder,
    lost: AbortSignal.any([own.lost, ...nearby.map((n) => n.lost)]),
    assertHeld: () => {
      for (const n of nearby) n.assertHeld();
      own.assertHeld();
    },
    pushFence: own.pushFence,
    release: () => releaseAll({ own, held: nearby }),
  };
}
