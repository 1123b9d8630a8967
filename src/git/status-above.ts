import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { loadStatusStore, defaultStatusDir } from "../status/status-store.js";
import { latestAppliedAbove } from "../status/applied-above.js";
import type { ObjectStatus, StatusStore } from "../status/status-types.js";
import { manifestDirOf, type StatusLocation } from "./status-source.js";

// The stores above a PATH (docs/status.md "Stores above"), read only: the default store of each
// directory above the manifest directory, up to the root of its git repository, in the
// environment's ENV/ when there is one. What they say was last applied (applied-above.ts) tells
// plan and apply that a secret is unchanged after an apply of the whole tree.

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

/** The status directories of the stores above `location`'s manifest directory, up to `top`, nearest first. */
export const statusDirsAbove = (location: StatusLocation, top: string): string[] =>
  directoriesAbove(manifestDirOf(location.root), top).map((dir) =>
    join(defaultStatusDir(dir), location.environment ?? ""),
  );

/**
 * What the stores above `location` (up to the git root `top`) last applied, per object. A store
 * that cannot be read is skipped (it only ever saves a re-send); its unreadable records too.
 */
export async function loadAppliedAbove(
  location: StatusLocation,
  top: string | undefined,
): Promise<Map<string, ObjectStatus>> {
  if (top === undefined) return new Map();
  const stores: StatusStore[] = [];
  for (const dir of statusDirsAbove(location, top))
    stores.push(await loadStatusStore(dir).catch(() => ({ objects: new Map(), problems: [] })));
  return latestAppliedAbove(stores);
}
