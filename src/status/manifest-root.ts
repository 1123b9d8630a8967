import { basename, dirname, isAbsolute, join, posix, relative, sep } from "node:path";
import { gitRootOf } from "../git-root.js";
import { DEFAULT_STATUS_DIR } from "./status-store.js";

// Which manifest directory a record's manifest_file is relative to (its manifest_root,
// docs/status.md): the directory's path from the root of its git repository ("." for the root
// itself), so a CI checkout and a controller's checkout name it alike, or its absolute path
// outside git. Without it two directories sharing a --status-dir looked alike (A/x.yaml and
// B/x.yaml both recorded "x.yaml"), and a prune of one deleted the other's objects.

const slashed = (path: string): string => path.split(sep).join("/");

/** The manifest_root of the manifest directory `dir` (a real, absolute path: manifestDirOf). */
export function manifestRootOf(dir: string): string {
  const repository = gitRootOf(dir);
  if (repository === undefined) return dir;
  return slashed(relative(repository, dir)) || ".";
}

/** The absolute directory a manifest_root names, seen from the manifest directory `dir`. */
export function manifestRootDir(root: string, dir: string): string | undefined {
  if (isAbsolute(root)) return root;
  const repository = gitRootOf(dir);
  return repository === undefined ? undefined : join(repository, ...root.split("/"));
}

/**
 * The record path `file` of root `root` as seen from the manifest root `from`: relative to it, or
 * undefined when it lies outside (or the two cannot be compared: one in git, one not).
 */
export function fileSeenFrom(root: string, file: string, from: string): string | undefined {
  if (isAbsolute(root) !== isAbsolute(from)) return undefined;
  const rel = posix.relative(slashed(from), posix.join(slashed(root), file));
  return rel === "" || rel === ".." || rel.startsWith("../") || posix.isAbsolute(rel) ? undefined : rel;
}

/**
 * The manifest directory whose default store `statusDir` is (`X/.plumb/status`, or its `ENV/`
 * with an environment): a record written there without a manifest_root (by a plumb before it) was
 * written from that directory. Undefined for any other store (a --status-dir elsewhere).
 */
export function storeOwnerOf(statusDir: string, environment: string | undefined): string | undefined {
  const tail = join(sep, DEFAULT_STATUS_DIR);
  const owner = (store: string) => (store.endsWith(tail) ? store.slice(0, -tail.length) || sep : undefined);
  const inEnvironment = environment !== undefined && basename(statusDir) === environment;
  return owner(statusDir) ?? (inEnvironment ? owner(dirname(statusDir)) : undefined);
}
