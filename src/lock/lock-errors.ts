import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { describeErrno, fileError, PlumbError } from "../errors.js";
import { describeHolder } from "./holder.js";
import type { DirLease } from "./local/lock-dir.js";

// What the local lock says when it cannot be taken: held (by whom, or forced free and until when),
// the store not writable by this user, or another error at the lock's path.

export function stateLockedError(seen: DirLease, statusDir: string, leaseMs: number) {
  const holder = seen.holder;
  if (seen.forced) {
    const secs = Math.ceil((holder?.lease_ms ?? leaseMs) / 1000);
    return new PlumbError(
      "state-locked",
      `the status store ${statusDir} was forced free (plumb unlock --force) from ${holder ? describeHolder(holder) : "another plumb process"}, which may still be running until its lease ends: it is free once it has gone ${secs} s unrenewed; wait, or pass --lock-timeout ${secs + 10}s`,
    );
  }
  const who = holder ? `held by ${describeHolder(holder)}` : "held by another plumb process";
  return new PlumbError(
    "state-locked",
    `the status store ${statusDir} is ${who}; wait for it, pass --lock-timeout to wait, or if that process is gone run: plumb unlock --force (same PATH/--status-dir)`,
  );
}

/** Errors that say the store's directory cannot be written by this user (or at all). */
const UNWRITABLE = new Set(["EACCES", "EPERM", "EROFS"]);

/** The nearest directory that exists on the way up to `dir`: the one to make writable. */
function existingDirOf(dir: string): string {
  for (let d = dir; ; d = dirname(d)) if (existsSync(d) || dirname(d) === d) return d;
}

/**
 * A store whose lock cannot be taken (its directory not writable by this user, a read-only file
 * system): which store, why, and the fix, exit 64 (a setting to fix). `nearbyOf`: the command of
 * which it is a store nearby (locks-in-order.ts); else the command's own store. Its own was a
 * lock-io-error naming only the lock, exit 1.
 */
export function storeUnwritableError(statusDir: string, cause: unknown, nearbyOf?: string): PlumbError {
  const why = describeErrno(cause);
  const writable = `make ${existingDirOf(dirname(statusDir))} writable for this user (or run as the user who applied there)`;
  const lock = `its lock ${statusDir}.lock cannot be taken: ${why}`;
  const message =
    nearbyOf === undefined
      ? `the status store ${statusDir} is this command's own (PATH's, or --status-dir): ${lock}. ` +
        `Its records are written ahead of every request, under that lock, so nothing is sent. ` +
        `Fix: ${writable}, or pass --status-dir to a directory this user can write`
      : `the status store ${statusDir} is a store nearby (above or below the manifests, docs/status.md "Stores above and below"): it records objects ${nearbyOf} sends too, and ${lock}. ` +
        `Without that lock plumb cannot know that no other writer is sending the same changes, so nothing is sent. ` +
        `Fix: ${writable}, or, if nothing is applied from there any more, remove that store (its records only save re-sending secrets)`;
  return new PlumbError(nearbyOf === undefined ? "store-unwritable" : "nearby-store-unwritable", message, {
    exitCode: 64,
    cause,
  });
}

export const lockIoError = (error: unknown, lockPath: string, statusDir: string) => {
  if (error instanceof PlumbError) return error;
  if (UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? ""))
    return storeUnwritableError(statusDir, error);
  return fileError(
    "lock-io-error",
    lockPath,
    error,
    "the state lock lives beside the status directory: check PATH, or pass --status-dir to a writable directory",
  );
};
