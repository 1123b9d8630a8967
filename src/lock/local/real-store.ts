import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

// A store's lock is keyed by the store's real path: a --status-dir given through a symlink by one
// process and by its real path by another named two locks (`link.lock`, `real.lock`) for one set of
// records, and both held "the" lock at once.

const MAX_LINKS = 40; // as the kernel's ELOOP limit: a loop of links ends here

/** A symbolic link; false for anything that cannot be looked at (ENOTDIR, EACCES: reported at the lock). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function targetOf(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * `dir` with every symbolic link on its way resolved, also where the store is not made yet: the
 * part that exists is resolved by realpath, a link to nothing yet by its target, the rest kept.
 */
export function realStoreDir(dir: string, links = 0): string {
  const path = resolve(dir);
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    if (parent === path || links > MAX_LINKS) return path;
    const link = isLink(path);
    const target = link ? targetOf(path) : undefined;
    if (target !== undefined) return realStoreDir(resolve(parent, target), links + 1);
    return join(realStoreDir(parent, links), basename(path));
  }
}
