import { constants } from "node:fs";
import { access, lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkStoreInsideDir } from "../controller/source/store-inside-dir.js";
import { manifestDirOf } from "../git/status-source.js";
import { nearbyStoresInUse as storesInUse } from "../git/status-nearby.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import { defaultStatusDir } from "../status/status-store.js";

// The stores nearby PATH (docs/status.md "Stores above and below") hold objects PATH applies too:
// `apply TREE` and `apply TREE/sub` each lock their own store, so when they ran at once both sent
// every change under sub (two revisions for one change). A writer therefore also locks the stores
// nearby that are in use (the store or its lock exists), all in one order (lock/locks-in-order.ts);
// the controller does the same (controller/leadership.ts).

/** The status directories of the stores above PATH (up to the git root) and below a directory PATH, in use now. */
export async function nearbyStoresInUse(path: string, environment: string | undefined): Promise<string[]> {
  return storesInUse(path, environment, gitRootOf(manifestDirOf(path)));
}

/**
 * With --status-dir X, the store PATH would have without it (its ENV/ with an environment), to lock
 * as well: X is where no other writer looks, so `apply TREE/sub --status-dir X` and `apply TREE`
 * both sent what is under sub. Locked, PATH's default store is in use and the others find it. Left
 * out when it cannot hold a lock of ours: a symlink out of PATH's directory (never written through),
 * or, not in use, a place this user cannot write (a read-only checkout, the reason for --status-dir),
 * where no writer of this user can be using it either.
 */
export async function defaultStoreToMark(path: string, environment: string | undefined): Promise<string[]> {
  const dir = manifestDirOf(path);
  const store = join(defaultStatusDir(dir), environment ?? "");
  try {
    await checkStoreInsideDir(dir, undefined, "command");
  } catch {
    return [];
  }
  const inUse = async (at: string) => Boolean(await lstat(at).catch(() => undefined));
  if ((await inUse(store)) || (await inUse(`${store}.lock`))) return [store];
  return (await writable(dirname(store))) ? [store] : [];
}

/** Whether the nearest existing directory at or above `dir` lets this user create entries. */
async function writable(dir: string): Promise<boolean> {
  for (let at = dir; ; at = dirname(at)) {
    if (await lstat(at).catch(() => undefined))
      return access(at, constants.W_OK).then(
        () => true,
        () => false,
      );
    if (dirname(at) === at) return false;
  }
}
