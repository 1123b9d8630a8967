import { randomUUID } from "node:crypto";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { PlumbError } from "../../errors.js";
import { committedLock } from "../committed-lock.js";
import { isDeadLocalHolder } from "../holder.js";
import { FORCED, legacyHolderPath, readLockDir, removePrepared } from "./lock-dir.js";
import type { LockHolder, LockTarget } from "../lock-types.js";
import { lockPathOf } from "./local-lock.js";

// Who holds a local lock (plumb unlock, plumb status), and plumb unlock --force: a holder that may
// still run has its lock ended in place (endLockDir), anything else at the lock's path is removed.

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The current holder, or null when the store is not locked. */
export async function readLocalLock(target: LockTarget): Promise<LockHolder | null> {
  // A path that is no lock at all (a file there) is said (lock-dir.ts); one that cannot be read is no holder.
  const seen = await readLockDir(lockPathOf(target)).catch((error: unknown) => {
    if (error instanceof PlumbError) throw error;
    return null;
  });
  if (!seen || seen.released) return null;
  if (await committedLock(lockPathOf(target))) return null; // a copy in git, not a holder's
  if (!seen.holder) return { id: "", host: "unknown", pid: 0, command: "plumb", since: "" };
  const { lease_ms: _lease, ...holder } = seen.holder;
  return seen.forced ? { ...holder, forced: true } : holder;
}

/**
 * Ends in place the lock of a holder that may still run (lock-dir.ts endLockDir), whoever holds it
 * by now (a takeover since the look: that holder's); one ended already is left to run out, never
 * removed early. False for a lock to remove: a holder of this host that is gone, no holder's beat.
 */
async function endLive(lockPath: string): Promise<boolean> {
  // Stryker disable next-line EqualityOperator,UpdateOperator: equivalent, each try reads the lock again; a holder renewing meanwhile moves its beat rarely
  for (let attempt = 0; attempt < 20; attempt++) {
    const seen = await readLockDir(lockPath).catch(() => null);
    if (seen?.forced) return true;
    const live = seen && !seen.released && seen.token.startsWith("beat-") && seen.holder?.id;
    if (!live || isDeadLocalHolder(seen.holder!)) return false;
    if (await endLockDir(lockPath, seen.token)) return true;
  }
  return false;
}

/**
 * Ends the lock whoever holds it; returns who held it. A holder that may still run (not a process of
 * this host that is gone) has its lock ended, not removed (lock-dir.ts endLockDir): it stops at its
 * next renewal, and the store is free once it went a whole lease unrenewed. Any other lock is removed.
 */
export async function forceLocalUnlock(target: LockTarget): Promise<LockHolder | null> {
  // A file there (no one's lock, lock-dir.ts) is removed too: --force asks for the path cleared.
  const holder = await readLocalLock(target).catch((error: unknown) => {
    if (error instanceof PlumbError && error.code === "lock-io-error") return null;
    throw error;
  });
  if (!(holder?.id && (await endLive(lockPathOf(target))))) await removeLockDir(lockPathOf(target));
  // A crashed claim's prepared directory beside it (lock-dir.ts).
  if (holder?.id) await removePrepared(lockPathOf(target), holder.id);
  await rm(legacyHolderPath(lockPathOf(target)), { force: true }); // an older plumb's record too
  return holder;
}

/**
 * plumb unlock --force of a lock whose holder may still run: the beat `token` (as last read) renamed
 * to a forced one, in one rename, so the holder's next renewal (or write past its deadline) fails
 * and it stops, while the lock stays for a waiter to watch a whole lease (the holder's lease_ms)
 * like any other before taking it. Removed instead, the next writer took it at once while the
 * holder still sent until its next renewal (up to a third of a lease). False when that beat is gone
 * (renewed, released, taken over meanwhile: read again).
 */
export async function endLockDir(lockPath: string, token: string): Promise<boolean> {
  try {
    await rename(join(lockPath, token), join(lockPath, `${FORCED}${randomUUID()}`));
    return true;
  } catch (error) {
    if (code(error) === "ENOENT") return false;
    throw error;
  }
}

/**
 * Removes the lock whoever holds it (plumb unlock --force): moved aside in one rename first, then
 * deleted. Deleted in place, a holder renewing meanwhile renamed a beat inside it after rm had
 * listed it, and rm failed with ENOTEMPTY (a loaded test run, renewals every 10 ms).
 */
export async function removeLockDir(lockPath: string): Promise<void> {
  const aside = `${lockPath}.removed-${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (code(error) === "ENOENT") return;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}
