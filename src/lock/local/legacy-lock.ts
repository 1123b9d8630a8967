import { randomUUID } from "node:crypto";
import { readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PlumbError } from "../../errors.js";
import { describeHolder, isDeadLocalHolder, parseHolder } from "../holder.js";
import { type DirLease, legacyHolderPath, readHolderText } from "./lock-dir.js";
import type { LockHolder } from "../lock-types.js";

// An older plumb on the same store (before the lease-watching lock) locked it with proper-lockfile:
// the directory `<statusDir>.lock`, created by mkdir and left empty, its mtime refreshed every third
// of its lease, plus `<statusDir>.lock.json` naming the holder. Both versions must exclude each other:
// - its lock stops this one: held while its mtime is fresh by proper-lockfile's own rule (stale once
//   older than the stale period, the older plumb's lease: 30 s unless --lock-lease said more, so the
//   larger of 30 s and this process's lease), or at once when its holder is a process of this host
//   that is gone;
// - this one's stops it: the same path is a directory (its mkdir fails), whose mtime every renewal
//   refreshes (the beat's rename), and which it cannot remove (rmdir of a directory with files
//   fails); the holder record beside it is written too, so the older plumb names who holds it.

/** The older plumb's default lease, its proper-lockfile stale period. */
const LEGACY_STALE_MS = 30_000;

export const legacyStaleMs = (leaseMs: number): number => Math.max(LEGACY_STALE_MS, leaseMs);

/**
 * The file system's own time beside the lock (a file written there and read back): the clock that
 * stamps an older plumb's mtime on this host, whatever this process's clock says (faketime, a clock
 * set wrong). Undefined when nothing can be written there.
 */
export async function fileSystemNow(lockPath: string): Promise<number | undefined> {
  const probe = `${lockPath}.now-${randomUUID()}`;
  try {
    await writeFile(probe, "");
    return (await stat(probe)).mtimeMs;
  } catch {
    return undefined;
  } finally {
    await rm(probe, { force: true });
  }
}

/**
 * proper-lockfile's rule: stale once the mtime is older than the stale period, by `now`: the earlier
 * of this process's clock and the file system's (fileSystemNow), so a waiter whose clock runs ahead
 * (by an hour: a fresh lock looked an hour old) never takes a live one.
 */
export const legacyStale = (seen: DirLease, now: number, staleMs: number): boolean =>
  !!seen.legacy &&
  ((seen.holder !== null && isDeadLocalHolder(seen.holder)) || seen.legacy.mtimeMs < now - staleMs);

export function legacyLockedError(seen: DirLease, lockPath: string, statusDir: string, now: number) {
  const who = seen.holder ? `, held by ${describeHolder(seen.holder)}` : "";
  // Stryker disable next-line OptionalChaining: equivalent, only called for an older plumb's lock (legacy set)
  const ago = Math.max(0, Math.round((now - (seen.legacy?.mtimeMs ?? now)) / 1000));
  return new PlumbError(
    "state-locked",
    `the status store ${statusDir} is locked by an older plumb: ${lockPath} is its lock (proper-lockfile's format, renewed ${ago}s ago${who}); wait for it to finish (--lock-timeout to wait), or if no older plumb uses this store any more remove it: plumb unlock --force (same PATH/--status-dir), or rm -r ${lockPath} ${legacyHolderPath(lockPath)}`,
  );
}

/** The holder record an older plumb reads (`<lock>.json`), written atomically while this one holds. */
export async function writeLegacyMarker(lockPath: string, holder: LockHolder): Promise<void> {
  const path = legacyHolderPath(lockPath);
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(holder, null, 2)}\n`, { mode: 0o644 });
    await rename(temp, path);
  } catch (error) {
    // Also when the write failed (a full disk: created, not written): it was left beside the lock.
    await rm(temp, { force: true });
    throw error;
  }
}

/** A holder record's temp file is this old at least before a later holder removes it. */
const STALE_MARKER_TEMP_MS = 60_000;
const MARKER_TEMP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/**
 * Removes the holder records' temp files (`<lock>.json.<uuid>.tmp`) that holders killed between the
 * write and the rename left beside the lock (kill -9, an OOM kill): nothing else did. Called by the
 * new holder, the one writer of the record; a minute old at least: never a write in flight (a holder
 * stopped in its write that long has lost the lock, and its rename failing is right). Best effort.
 */
export async function removeStaleMarkerTemps(lockPath: string, now = Date.now()): Promise<void> {
  const path = legacyHolderPath(lockPath);
  const [dir, prefix] = [dirname(path), `${basename(path)}.`];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix) || !MARKER_TEMP.test(name.slice(prefix.length))) continue;
    const info = await stat(join(dir, name)).catch(() => null);
    if (!info?.isFile() || now - info.mtimeMs < STALE_MARKER_TEMP_MS) continue;
    await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}

/** Removes the record if it is still this holder's (a next holder may have written its own). */
export async function removeLegacyMarker(lockPath: string, id: string): Promise<void> {
  const path = legacyHolderPath(lockPath);
  const text = await readHolderText(path);
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, the file was just read (force: when missing)
  if (parseHolder(text)?.id === id) await rm(path, { force: true });
}
