import { mkdir, rm } from "node:fs/promises";
import { dirname } from "node:path";
import lockfile from "proper-lockfile";
import { type Clock, systemClock } from "../clock.js";
import { fileError, PlumbError } from "../errors.js";
import {
  describeHolder,
  isDeadLocalHolder,
  newHolder,
  readHolder,
  removeHolder,
  writeHolder,
} from "./holder.js";
import { DEFAULT_LEASE_MS, type LockOptions, type LockTarget, type StateLock } from "./lock-types.js";

// The lock of a local status directory: proper-lockfile's lock directory `<statusDir>.lock`
// (atomic mkdir; its mtime renewed while held, so a holder that stopped renewing is stale after
// the lease) plus the holder record beside it. A holder on this host whose pid is gone is stale at
// once, so a re-run right after a kill -9 is not blocked. It lives beside the status directory,
// never in it: the store and the status branch carry only `*.json` records.

const MIN_LEASE_MS = 5_000; // proper-lockfile's smallest stale time

export const lockPathOf = (target: LockTarget): string => `${target.statusDir.replace(/[/\\]+$/, "")}.lock`;

function stateLockedError(holder: Awaited<ReturnType<typeof readHolder>>, statusDir: string) {
  const who = holder ? `held by ${describeHolder(holder)}` : "held by another plumb process";
  return new PlumbError(
    "state-locked",
    `the status store ${statusDir} is ${who}; wait for it, pass --lock-timeout to wait, or if that process is gone run: plumb unlock --force (same PATH/--status-dir)`,
  );
}

/** One attempt; null when another process holds the lock. */
async function tryLock(target: LockTarget, options: LockOptions, lost: AbortController, clock: Clock) {
  const lockPath = lockPathOf(target);
  const leaseMs = Math.max(MIN_LEASE_MS, options.leaseMs ?? DEFAULT_LEASE_MS);
  const renewMs = Math.max(1_000, Math.min(options.renewMs ?? leaseMs / 3, leaseMs / 2));
  try {
    await mkdir(dirname(lockPath), { recursive: true });
    const release = await lockfile.lock(target.statusDir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: leaseMs,
      update: renewMs,
      retries: 0,
      onCompromised: (error) =>
        lost.abort(new PlumbError("lock-lost", `lost the state lock: ${error.message}`)),
    });
    const holder = newHolder(options.command, clock.now());
    await writeHolder(lockPath, holder);
    return { holder, release, lockPath };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOCKED") throw lockIoError(error, lockPath);
    const holder = await readHolder(lockPath);
    if (holder && isDeadLocalHolder(holder)) {
      // Its process is gone: clear it and try again at once.
      await rm(lockPath, { recursive: true, force: true });
      await removeHolder(lockPath);
      return tryLock(target, options, lost, clock);
    }
    return null;
  }
}

const lockIoError = (error: unknown, lockPath: string) =>
  error instanceof PlumbError
    ? error
    : fileError(
        "lock-io-error",
        lockPath,
        error,
        "the state lock lives beside the status directory: check PATH, or pass --status-dir to a writable directory",
      );

export async function acquireLocalLock(target: LockTarget, options: LockOptions): Promise<StateLock> {
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + (options.timeoutMs ?? 0);
  const lost = new AbortController();
  for (;;) {
    const got = await tryLock(target, options, lost, clock);
    if (got) {
      let released = false;
      return {
        holder: got.holder,
        lost: lost.signal,
        async release() {
          if (released) return;
          released = true;
          await removeHolder(got.lockPath);
          await got.release().catch(() => undefined); // already compromised or removed: nothing to undo
        },
      };
    }
    if (options.signal?.aborted) throw options.signal.reason;
    if (clock.now() >= deadline)
      throw stateLockedError(await readHolder(lockPathOf(target)), target.statusDir);
    await clock.sleep(
      Math.min(options.retryMs ?? 1_000, Math.max(1, deadline - clock.now())),
      options.signal,
    );
  }
}

export async function readLocalLock(target: LockTarget) {
  const lockPath = lockPathOf(target);
  const locked = await lockfile
    .check(target.statusDir, { lockfilePath: lockPath, realpath: false, stale: DEFAULT_LEASE_MS })
    .catch(() => false);
  if (!locked) return null;
  return (await readHolder(lockPath)) ?? { id: "", host: "unknown", pid: 0, command: "plumb", since: "" };
}

/** Removes the lock whoever holds it; returns who held it. */
export async function forceLocalUnlock(target: LockTarget) {
  const lockPath = lockPathOf(target);
  const holder = await readLocalLock(target);
  await rm(lockPath, { recursive: true, force: true });
  await removeHolder(lockPath);
  return holder;
}
