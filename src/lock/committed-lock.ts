import { readdir } from "node:fs/promises";
import { trackedNamesIn } from "../git/records/tracked-records.js";

// A state lock committed to the repository (`.plumb/` added with the manifests while a plumb held
// the lock) is a copy of a lock, not one: in a fresh clone it named a process of another machine
// (or a gone one of this), so apply waited for a lease that no one renews, and status and unlock
// said the store was held. As git-tracked status records are (git/records/tracked-records.ts), it is not
// trusted, and said. A holder's lock is never all tracked: its renewal file is named after the
// holder's own id and renamed at every renewal, so a lock taken after the commit has a file git
// does not track.

/** Why the lock directory at `lockPath` is not trusted (every file in it is tracked by git); else undefined. */
export async function committedLock(lockPath: string): Promise<string | undefined> {
  const names = await readdir(lockPath).catch(() => [] as string[]);
  if (names.length === 0) return undefined;
  const tracked = await trackedNamesIn(lockPath);
  if (!tracked || !names.every((name) => tracked.has(name))) return undefined;
  return `the state lock ${lockPath} is tracked by git: a lock committed to the repository names no running process, so it is not trusted`;
}

/** What to do about a committed lock (and the records committed with it). */
export const UNTRACK_LOCK = "untrack the store (git rm -r --cached .plumb) and add .plumb/ to .gitignore";
