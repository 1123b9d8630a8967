import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { loadStatusStore, defaultStatusDir } from "../status/status-store.js";
import { latestAppliedNearby } from "../status/applied-nearby.js";
import { emptyStatusStore, type ObjectStatus, type StatusStore } from "../status/status-types.js";
import { loadStatusAndBranchAbove, manifestDirOf, type StatusLocation } from "./status-source.js";

// The stores above a PATH (docs/status.md "Stores above"), read only: the default store of each
// directory above the manifest directory, up to the root of its git repository, in the
// environment's ENV/ when there is one, in the directory and on the status branch when one is
// given. What they say was last applied (applied-nearby.ts) tells plan and apply that a secret is
// unchanged after an apply of the whole tree.

/** The directories strictly above `dir`, nearest first, up to and including `top` (none when `dir` is not below it). */
export function directoriesAbove(dir: string, top: string): string[] {
  const own = resolve(dir);
  const root = resolve(top);
  const found: string[] = [];
  const rel = relative(root, own);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return found;
  for (let at = dirname(own); ; at = dirname(at)) {
    found.push(at);
    if (at === root || dirname(at) === at) return found;
  }
}

/**
 * The store of `location` (loadStatus) and what the stores above it, up to the git root `top`
 * (undefined: none), last applied per object. A store above that cannot be read is skipped (it
 * only ever saves a re-send), and so are its unreadable records.
 */
export async function loadStatusWithNearby(
  location: StatusLocation,
  top: string | undefined,
): Promise<{ store: StatusStore; appliedNearby: Map<string, ObjectStatus> }> {
  const dirs = top === undefined ? [] : directoriesAbove(manifestDirOf(location.root), top);
  const { store, branchAbove } = await loadStatusAndBranchAbove(location, dirs);
  const stores: StatusStore[] = [...branchAbove];
  for (const dir of dirs) {
    const statusDir = join(defaultStatusDir(dir), location.environment ?? "");
    stores.push(await loadStatusStore(statusDir).catch(() => emptyStatusStore()));
  }
  return { store, appliedNearby: latestAppliedNearby(stores) };
}
