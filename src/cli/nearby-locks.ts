import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { manifestDirOf } from "../git/status-source.js";
import { directoriesAbove } from "../git/status-nearby.js";
import { gitRootOf } from "../manifest/environment-scan.js";
import { defaultStatusDir } from "../status/status-store.js";
import { directoriesBelow } from "../status/stores-below.js";

// The stores nearby PATH (docs/status.md "Stores above and below") hold objects PATH applies too:
// `apply TREE` and `apply TREE/sub` each lock their own store, so when they ran at once both sent
// every change under sub (two revisions for one change). A writer therefore also locks the stores
// nearby that are in use (the store or its lock exists), after its own: of two writers starting
// together, the later one to lock its own store sees the other's lock.

/** The status directories of the stores above PATH (up to the git root) and below a directory PATH, in use now. */
export async function nearbyStoresInUse(path: string, environment: string | undefined): Promise<string[]> {
  const own = manifestDirOf(path);
  const top = gitRootOf(own);
  const above = top === undefined ? [] : directoriesAbove(own, top);
  const below = own === resolve(path) ? await directoriesBelow(own) : [];
  return [...above, ...below]
    .map((dir) => join(defaultStatusDir(dir), environment ?? ""))
    .filter((dir) => existsSync(dir) || existsSync(`${dir.replace(/[/\\]+$/, "")}.lock`))
    .sort();
}
