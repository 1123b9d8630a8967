import { manifestDirOf } from "../git/status-source.js";
import { nearbyStoresInUse as storesInUse } from "../git/status-nearby.js";
import { gitRootOf } from "../manifest/environment-scan.js";

// The stores nearby PATH (docs/status.md "Stores above and below") hold objects PATH applies too:
// `apply TREE` and `apply TREE/sub` each lock their own store, so when they ran at once both sent
// every change under sub (two revisions for one change). A writer therefore also locks the stores
// nearby that are in use (the store or its lock exists), all in one order (lock/locks-in-order.ts);
// the controller does the same (controller/leadership.ts).

/** The status directories of the stores above PATH (up to the git root) and below a directory PATH, in use now. */
export async function nearbyStoresInUse(path: string, environment: string | undefined): Promise<string[]> {
  return storesInUse(path, environment, gitRootOf(manifestDirOf(path)));
}
