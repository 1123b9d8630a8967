import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_STATUS_DIR } from "./status-store.js";

// Where the stores below a directory PATH are (docs/status.md "Stores above and below"): the
// default store `.plumb/status/` of each directory of its tree, found by one walk of directories,
// or in one listing of the status branch. Read only, as the stores above (status-nearby.ts).

/** Installed dependencies and git's own files hold no store; `.plumb` is a store, never a tree. */
const SKIPPED = new Set(["node_modules", ".git", ".plumb"]);

/** The walk stops after this many directories: a store past it only costs a re-send. */
const MAX_DIRECTORIES_WALKED = 20_000;

/**
 * The directories strictly below `dir` that hold a `.plumb` directory (their default store is
 * `.plumb/status/`), nearest first, then by name. One readdir per directory, of the directories
 * only (no file is looked at, no symlink followed); node_modules, .git and `.plumb` itself are not
 * entered; an unreadable directory is skipped; at most `limit` directories are read.
 */
export async function directoriesBelow(dir: string, limit = MAX_DIRECTORIES_WALKED): Promise<string[]> {
  const found: string[] = [];
  let level = [dir];
  for (let read = 0; level.length > 0 && read < limit;) {
    const reading = level.slice(0, limit - read);
    read += reading.length;
    // One level's directories are read together (the thread pool reads four at a time).
    const listed = await Promise.all(
      reading.map((at) => readdir(at, { withFileTypes: true }).catch(() => [] as Dirent[])),
    );
    const next: string[] = [];
    listed.forEach((entries, i) => {
      for (const entry of entries) {
        if (!entry.isDirectory()) continue;
        if (entry.name === ".plumb" && reading[i] !== dir) found.push(reading[i]!);
        if (!SKIPPED.has(entry.name)) next.push(join(reading[i]!, entry.name));
      }
    });
    level = next.sort();
  }
  return found;
}

/**
 * The stores below `base` (a directory of the repository, "" at its root) among `paths`, the
 * file names a status branch lists under it (`git ls-tree -r --name-only`): each store's path on
 * the branch (`DIR/.plumb/status`, `/ENV` with an environment) with its records' file names. The
 * store of `base` itself, and anything under node_modules or .git, are not among them.
 */
export function storesBelowInListing(
  paths: readonly string[],
  base: string,
  environment: string | undefined,
): Map<string, string[]> {
  const stores = new Map<string, string[]>();
  const [plumb, status] = DEFAULT_STATUS_DIR.split("/");
  for (const path of paths) {
    if (base !== "" && !path.startsWith(`${base}/`)) continue;
    const segments = (base === "" ? path : path.slice(base.length + 1)).split("/");
    const at = segments.indexOf(plumb!);
    if (at <= 0 || segments.slice(0, at).some((s) => SKIPPED.has(s)) || segments[at + 1] !== status) continue;
    const rest = segments.slice(at + 2);
    const name = rest.at(-1)!;
    if (!name.endsWith(".json") || rest.length !== (environment ? 2 : 1)) continue;
    if (environment && rest[0] !== environment) continue;
    const store = [...(base === "" ? [] : [base]), ...segments.slice(0, at + 2), ...rest.slice(0, -1)].join(
      "/",
    );
    stores.set(store, [...(stores.get(store) ?? []), name]);
  }
  return stores;
}
