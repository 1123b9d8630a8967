import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { ManagedRecord } from "../../diff/plan/plan-prune.js";
import { manifestDirOf } from "../../git/status/status-source.js";
import { fileSeenFrom, manifestRootDir, manifestRootOf, storeOwnerOf } from "../../status/manifest-root.js";

// Which of a store's records a prune of PATH may judge (docs/apply.md "Prune"). A record's
// manifest_file is relative to the directory that wrote it (its manifest_root): seen from PATH's
// manifest directory, a record of another directory sharing the store (--status-dir) lies outside
// PATH and is never judged removed; one of a directory above PATH (the store's own, PATH below it)
// counts only when its file lies inside PATH, its manifest_file rewritten relative to PATH.

/** Where the records a prune reads were kept: the status directory and its environment. */
export type StoreOf = { statusDir: string; environment?: string | undefined };

export type RecordWithRoot = ManagedRecord & { manifest_root?: string | null | undefined };

export type ScopedRecords = {
  /** The records inside PATH, manifest_file relative to PATH's manifest directory. */
  inside: ManagedRecord[];
  /** Records whose directory is unknown (older than manifest_root, in a store not PATH's own). */
  untied: ManagedRecord[];
  /** The directories (absolute) the store's records were applied from: the store's whole tree. */
  trees: string[];
};

const real = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
};

const oneFile = (root: string): boolean =>
  statSync(resolve(root), { throwIfNoEntry: false })?.isFile() === true;

/**
 * The manifest_root a record without one was written from: the directory whose default store holds
 * it; undefined for a store elsewhere (the controller's sweep, given no store, reads its own).
 */
function inferredRoot(dir: string, store: StoreOf | undefined): string | undefined {
  if (store === undefined) return manifestRootOf(dir);
  const owner = storeOwnerOf(store.statusDir, store.environment);
  return owner === undefined ? undefined : manifestRootOf(real(owner));
}

/** The records of a store as a prune of `root` (a directory or one file) sees them. */
export function recordsSeenFrom(
  root: string,
  records: Iterable<RecordWithRoot>,
  store?: StoreOf,
): ScopedRecords {
  const dir = manifestDirOf(root);
  const from = manifestRootOf(dir);
  const fallback = inferredRoot(dir, store);
  const out: ScopedRecords = { inside: [], untied: [], trees: [] };
  const trees = new Set<string>();
  // A recorded directory gone from disk (the tree moved, its store with it: `mv deploy deployments`,
  // a copy outside git) names nothing any more: the record is read as one that names none.
  const known = new Map<string, boolean>();
  const stillThere = (recorded: string): boolean => {
    if (!known.has(recorded)) {
      const at = manifestRootDir(recorded, dir);
      known.set(recorded, at !== undefined && existsSync(at));
    }
    return known.get(recorded)!;
  };
  for (const record of records) {
    // Unknown (an older record in a --status-dir): a directory PATH takes it for its own, as plumb
    // did before; one file cannot tell it from another directory's file of that name.
    const recorded =
      record.manifest_root && stillThere(record.manifest_root) ? record.manifest_root : undefined;
    const recordRoot = recorded ?? fallback ?? (oneFile(root) ? undefined : from);
    const file = record.manifest_file;
    if (recordRoot === undefined) {
      out.untied.push(record);
      continue;
    }
    const tree = manifestRootDir(recordRoot, dir);
    if (tree !== undefined) trees.add(tree);
    // A record without a file (written before files were) is judged only by its own directory's read.
    const seen = file ? fileSeenFrom(recordRoot, file, from) : recordRoot === from ? null : undefined;
    if (seen !== undefined) out.inside.push({ ...record, manifest_file: seen });
  }
  out.trees = [...trees].sort();
  return out;
}
