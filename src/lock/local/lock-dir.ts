import { randomUUID } from "node:crypto";
import { existsSync, renameSync } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PlumbError } from "../../errors.js";
import { MAX_HOLDER_BYTES, readStateFile } from "../../status/state-file.js";
import { parseHolder } from "../holder.js";
import type { LockHolder } from "../lock-types.js";

// The lock directory `<statusDir>.lock` on disk, every change an atomic rename:
//   holder.json             who holds it and its lease (lease_ms), written before the lock appears
//   beat-<holder id>-<n>    an empty file the holder renames to n+1 at every renewal
// Taking it: the path claimed by mkdir (fails while any lock is there, as an older plumb's
// proper-lockfile lock does), then a prepared directory renamed onto that empty claim. Renewing: the
// rename of its own beat, which fails once the directory is someone else's (a compare-and-swap, so a
// holder that wakes up after a takeover cannot renew the new holder's lock); it also refreshes the
// directory's mtime, which is what an older plumb watches. Taking over a stale one: the beat that
// was watched expire renamed to a released one (a compare-and-swap: a renewed lock is never touched),
// then the directory renamed aside and removed.
//
// An older plumb's lock (proper-lockfile, before the lease-watching lock) is the same path as an
// empty directory whose mtime its holder refreshes, and `<statusDir>.lock.json` naming the holder:
// read here as `legacy` (legacy-lock.ts says when it is stale).
//
// A plumb that crashed between its mkdir claim and the rename leaves that same empty directory, and
// beside it the prepared `<statusDir>.lock.new-<holder id>` naming it (written before the claim, so
// the claim is never visible without it): read as `claim`, that holder's lock (a dead local one is
// stale at once; token `claim-<id>`), not as an older plumb's. Only a prepared record the claim followed within
// CLAIM_WINDOW_MS (both mtimes of the same filesystem) counts: one left by a crash long before an
// older plumb locked the store does not name that lock.

export type DirLease = {
  holder: (LockHolder & { lease_ms?: number }) | null;
  /** Changes at every renewal: what a waiter watches (observer.ts). */
  token: string;
  released: boolean;
  /** Ended by plumb unlock --force while its holder may still run (endLockDir): free after its lease. */
  forced?: boolean;
  /** An older plumb's lock: no holder.json nor beat inside; its directory's mtime (ms). */
  legacy?: { mtimeMs: number };
};

/** How soon after its prepared record a claim is made: two writes and a mkdir apart. */
const CLAIM_WINDOW_MS = 5_000;

const HOLDER_FILE = "holder.json";
/**
 * A holder record's text, "" when it cannot be read as one: not blocking on a FIFO put there (a
 * waiter blocked for ever), not through a link, bounded (status/state-file.ts).
 */
export const readHolderText = (path: string): Promise<string> =>
  // Stryker disable next-line StringLiteral,ArrowFunction: equivalent, a record that cannot be read or is not JSON is no holder
  readStateFile(path, MAX_HOLDER_BYTES, "a lock record").catch(() => "");
const beat = (id: string, n: number | "released") => `beat-${id}-${n}`;
/** The beat of a lock ended by plumb unlock --force (endLockDir). */
export const FORCED = "beat-forced-";
/** rename() onto a lock that is there: a directory with files (EEXIST/ENOTEMPTY), or a file. */
const HELD = new Set(["EEXIST", "ENOTEMPTY", "ENOTDIR", "EISDIR"]);
const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Creates the lock for `holder`; false when there is one already. */
export async function createLockDir(lockPath: string, holder: LockHolder, leaseMs: number): Promise<boolean> {
  await mkdir(dirname(lockPath), { recursive: true });
  const fresh = preparedPathOf(lockPath, holder.id);
  await mkdir(fresh);
  try {
    const record = { ...holder, lease_ms: leaseMs };
    await writeFile(join(fresh, HOLDER_FILE), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o644 });
    // Stryker disable next-line StringLiteral: equivalent, a beat's content is never read (its name is the renewal)
    await writeFile(join(fresh, beat(holder.id, 0)), "");
    // Claimed by mkdir first: rename() would replace an empty directory, an older plumb's lock.
    // (A lock there: EEXIST, one of HELD below.)
    await mkdir(lockPath);
    await rename(fresh, lockPath).catch(async (error: unknown) => {
      await rmdir(lockPath).catch(() => undefined); // the empty claim, not anyone's lock
      throw error;
    });
    return true;
  } catch (error) {
    if (HELD.has(code(error) ?? "")) return false;
    throw error;
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

/** The lock as a waiter sees it; null when there is none. */
export async function readLockDir(lockPath: string): Promise<DirLease | null> {
  let names: string[];
  try {
    names = await readdir(lockPath);
  } catch (error) {
    if (code(error) === "ENOENT") return null;
    if (code(error) === "ENOTDIR") await refuseNotALock(lockPath);
    throw error;
  }
  const beatName = names.find((n) => n.startsWith("beat-"));
  if (!beatName && !names.includes(HOLDER_FILE)) {
    // Stryker disable next-line ArrowFunction: equivalent, undefined?.mtimeMs is null?.mtimeMs
    const mtimeMs = (await stat(lockPath).catch(() => null))?.mtimeMs;
    if (mtimeMs === undefined) return null; // gone meanwhile
    const claim = await claimOf(lockPath, mtimeMs);
    if (claim) return claim;
    const text = await readHolderText(legacyHolderPath(lockPath));
    return { holder: parseHolder(text), token: `legacy-${mtimeMs}`, released: false, legacy: { mtimeMs } };
  }
  // Stryker disable next-line StringLiteral: equivalent, a token is only compared with itself
  const token = beatName ?? "no-beat";
  const text = await readHolderText(join(lockPath, HOLDER_FILE));
  const lease = { holder: parseHolder(text), token, released: token.endsWith("-released") };
  return token.startsWith(FORCED) ? { ...lease, forced: true } : lease;
}

const preparedPathOf = (lockPath: string, id: string) => `${lockPath}.new-${id}`;

/**
 * Something that is no directory at the lock's path (a file, a link to one, a FIFO): no plumb makes
 * a lock so (this one and an older one both make a directory), so it is no one's lock. Read as
 * one, it was "held by another plumb process" (pid 0 on unknown) and, waited for a lease, renamed
 * aside and deleted. Refused with what it is and the fix; nothing is removed. A path one of whose
 * parents is a file (ENOTDIR there too) is not refused here: there is no lock.
 */
async function refuseNotALock(lockPath: string): Promise<void> {
  // Stryker disable next-line ArrowFunction: equivalent, !undefined is !null
  const stats = await lstat(lockPath).catch(() => null);
  if (!stats || stats.isDirectory()) return;
  const what = stats.isSymbolicLink()
    ? "a symbolic link to no directory"
    : stats.isFile()
      ? "a file"
      : "neither a file nor a directory";
  throw new PlumbError(
    "lock-io-error",
    `${lockPath} is ${what}, not a state lock: plumb's lock there is a directory it creates and removes itself, so something else put this one there. ` +
      `Fix: move it away or remove it (rm ${lockPath}) if nothing of yours uses it, or pass --status-dir to another directory`,
  );
}

/** The empty lock directory as the claim of the plumb whose prepared directory it followed. */
async function claimOf(lockPath: string, mtimeMs: number): Promise<DirLease | undefined> {
  const prefix = `${basename(lockPath)}.new-`;
  for (const name of await readdir(dirname(lockPath))) {
    if (!name.startsWith(prefix)) continue;
    const record = join(dirname(lockPath), name, HOLDER_FILE);
    // Stryker disable next-line ArrowFunction: equivalent, undefined?.mtimeMs is null?.mtimeMs
    const written = (await stat(record).catch(() => null))?.mtimeMs ?? Infinity;
    if (written > mtimeMs || mtimeMs - written > CLAIM_WINDOW_MS) continue;
    const holder = parseHolder(await readHolderText(record));
    if (holder) return { holder, token: `claim-${name.slice(prefix.length)}`, released: false };
  }
  return undefined;
}

/** The holder record an older plumb keeps beside its lock, and plumb writes too while it holds one. */
export const legacyHolderPath = (lockPath: string): string => `${lockPath}.json`;

/** The holder's renewal n → n+1; false when the lock is no longer its own (taken over, forced). */
export async function renewLockDir(lockPath: string, id: string, n: number): Promise<boolean> {
  try {
    await rename(join(lockPath, beat(id, n)), join(lockPath, beat(id, n + 1)));
    return true;
  } catch (error) {
    if (code(error) === "ENOENT") return false;
    throw error;
  }
}

/**
 * renewLockDir on the spot, for a holder whose deadline passed while its event loop was blocked:
 * true when it renewed now, or when a renewal already in flight had (its beat n+1 is there).
 */
export function renewLockDirSync(lockPath: string, id: string, n: number): boolean {
  try {
    renameSync(join(lockPath, beat(id, n)), join(lockPath, beat(id, n + 1)));
    return true;
  } catch {
    return existsSync(join(lockPath, beat(id, n + 1)));
  }
}

/** Releases the holder's own lock; a lock that is someone else's by now is left alone. */
export async function releaseLockDir(lockPath: string, id: string, n: number): Promise<void> {
  const released = beat(id, "released");
  try {
    await rename(join(lockPath, beat(id, n)), join(lockPath, released));
  } catch (error) {
    if (code(error) === "ENOENT") return;
    throw error;
  }
  await takeOverLockDir(lockPath, released);
}

/**
 * Removes the lock if it still shows `token` (a lease watched expire, a released one, a dead
 * holder's); a lock renewed or re-taken meanwhile is left (or put back). True when it was removed.
 */
export async function takeOverLockDir(lockPath: string, watched: string): Promise<boolean> {
  // A holder's live beat is released first, in one rename: a compare-and-swap on the renewal watched
  // (the holder's next renewal then fails). Renewed meanwhile, the lock is never moved. Moved aside
  // to be compared (below), a live lock left its path empty for a moment: the holder's renewal then
  // failed, and a third writer could take the path, so that the lock put back failed and was deleted
  // while its holder, renewed just before, went on sending until its next renewal.
  const token = await releaseWatched(lockPath, watched);
  if (token === null) return false;
  const aside = `${lockPath}.stale-${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (code(error) === "ENOENT") return false;
    throw error;
  }
  const seen = await readLockDir(aside);
  // An older plumb's lock or a crashed claim: its mtime may move with the rename itself; still empty
  // is still the one. A claim's prepared directory goes with it.
  const empty = seen?.legacy && (token.startsWith("legacy-") || token.startsWith("claim-"));
  if (seen?.token === token || empty) {
    await rm(aside, { recursive: true, force: true });
    // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, no prepared directory is named after a token that is no claim
    if (token.startsWith("claim-")) await removePrepared(lockPath, token.slice("claim-".length));
    return true;
  }
  // Not the one watched: put it back; if a new lock appeared meanwhile, its holder will find its
  // own renewal failing and stop.
  await rename(aside, lockPath).catch(() => rm(aside, { recursive: true, force: true }));
  return false;
}

/** `watched` as a released beat (its new token), or null when that beat is gone (renewed, taken). */
async function releaseWatched(lockPath: string, watched: string): Promise<string | null> {
  if (!watched.startsWith("beat-") || watched.endsWith("-released")) return watched;
  try {
    await rename(join(lockPath, watched), join(lockPath, `${watched}-released`));
    return `${watched}-released`;
  } catch (error) {
    if (code(error) === "ENOENT") return null;
    throw error;
  }
}

/** A crashed claimant's prepared directory (`id` from its name, as claimOf found it). */
export const removePrepared = (lockPath: string, id: string) =>
  rm(preparedPathOf(lockPath, id), { recursive: true, force: true });
