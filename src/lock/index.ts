import { systemClock } from "../clock.js";
import { manifestDirOf, resolveStatusDir, type StatusLocation } from "../git/status/status-source.js";
import { acquireBranchLease } from "./branch/acquire.js";
import { forceBranchUnlock, readBranchLease } from "./branch/unlock.js";
import { committedLock, UNTRACK_LOCK } from "./committed-lock.js";
import { acquireLocalLock, lockPathOf } from "./local/local-lock.js";
import { forceLocalUnlock, readLocalLock } from "./local/local-unlock.js";
import {
  DEFAULT_LEASE_MS,
  type LockHolder,
  type LockOptions,
  type LockTarget,
  type StateLock,
} from "./lock-types.js";

// The state lock: one writer per status store (apply, adopt, the controller; drift and status to
// write the records they refreshed, else they report only); plan never takes it. The local status
// directory's lock, plus, with --status-branch, a lease in the git remote (writers on other
// machines share that store). See docs/status.md.

export type { LockHolder, LockOptions, LockTarget, StateLock } from "./lock-types.js";
export { describeHolder } from "./holder.js";
export { lapsedWhileStopping } from "./fence.js";

export const lockTargetOf = (location: StatusLocation): LockTarget => ({
  statusDir: resolveStatusDir(location),
  root: manifestDirOf(location.root),
  statusBranch: location.statusBranch,
  gitEnv: location.gitEnv,
  gitStop: location.gitStop,
  environment: location.environment,
});

// An environment's store has a lease of its own (refs/plumb/locks/BRANCH@ENV): applies to staging
// and prod, and the controller replicas leading them, do not exclude each other.
const branchOf = (target: LockTarget) =>
  target.statusBranch && target.root
    ? {
        root: target.root,
        branch: target.environment ? `${target.statusBranch}@${target.environment}` : target.statusBranch,
        gitEnv: target.gitEnv,
        gitStop: target.gitStop,
        environment: target.environment,
      }
    : undefined;

/** Takes the lock (waiting up to options.timeoutMs) and renews it until released; state-locked otherwise. */
export async function acquireStateLock(target: LockTarget, options: LockOptions): Promise<StateLock> {
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + (options.timeoutMs ?? 0); // one budget for the lock and the lease
  const local = await acquireLocalLock(target, options);
  const branch = branchOf(target);
  if (!branch) return local;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  try {
    const lease = await acquireBranchLease(branch, local.holder, {
      leaseMs,
      renewMs: options.renewMs ?? leaseMs / 3,
      timeoutMs: Math.max(0, deadline - clock.now()),
      retryMs: options.retryMs ?? 1_000,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.monotonic ? { monotonic: options.monotonic } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // The lease first: a renewal on the spot there is a push (branch/renewal.ts renewNow); the local
    // lock's, a rename, is then checked closest to the write.
    const assertHeld = () => {
      lease.assertHeld();
      local.assertHeld();
    };
    return {
      holder: local.holder,
      lost: AbortSignal.any([local.lost, lease.lost]),
      assertHeld,
      pushFence: { check: assertHeld, withLease: lease.withLease },
      async release() {
        await lease.release();
        await local.release();
      },
    };
  } catch (error) {
    await local.release();
    throw error;
  }
}

/** Why the store's local lock is not trusted (committed to git: committed-lock.ts); else undefined. */
export const committedStateLock = async (target: LockTarget): Promise<string | undefined> => {
  const why = await committedLock(lockPathOf(target));
  return why && `${why}; ${UNTRACK_LOCK}`;
};

/** The current holder, or null when the store is not locked. */
export async function readStateLock(target: LockTarget): Promise<LockHolder | null> {
  const branch = branchOf(target);
  return (await readLocalLock(target)) ?? (branch ? await readBranchLease(branch) : null);
}

/** Removes the lock whoever holds it (and the branch lease); returns who held it (null: not locked). */
export async function forceUnlock(target: LockTarget): Promise<LockHolder | null> {
  const branch = branchOf(target);
  const local = await forceLocalUnlock(target);
  const leased = branch ? await forceBranchUnlock(branch) : null;
  return local ?? leased;
}
