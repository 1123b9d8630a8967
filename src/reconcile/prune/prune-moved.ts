import { existsSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { loadManifestsOnce, type ManifestLoads } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { manifestDirOf } from "../../git/status/status-source.js";
import { statusKey } from "../../status/status-types.js";
import { resolveForPlan } from "../plan/plan-environment.js";
import { type RecordWithRoot, recordsSeenFrom, type StoreOf } from "./prune-scope.js";

// A prune scoped narrower than its status store (one file; a directory below the directory that
// applied its records, with --status-dir; a directory sharing its store with others) judges only
// what it read. An object that left it may have moved to another file or directory of the store's
// tree (split, merged, moved up or beside): it is still in git there, and deleting it would take a
// live deployment down until the next apply there creates it again under a new id. So before such a
// prune stands, each directory the store's records were applied from, and a file PATH's own
// directory, is read whole, unless PATH's read already covered it: what they define is not removed.

const isOutside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
};

const unreadable = (p: PlannedPrune, why: string): PlannedPrune => ({ ...p, action: "orphan", refused: why });

/** The directories to read again: the store's tree and a file's own directory, less what PATH covered. */
function treesToRead(root: string, trees: readonly string[]): string[] {
  const dir = manifestDirOf(root);
  const read = statSync(resolve(root)).isDirectory() ? dir : undefined; // a directory PATH, read whole
  const all = [...new Set([...trees, dir])].filter((t) => read === undefined || isOutside(read, t));
  // A tree inside another one listed is read with it; one gone from disk defines nothing.
  return all.filter((t) => !all.some((u) => u !== t && !isOutside(u, t)) && existsSync(t));
}

/**
 * `prune` without the objects the store's tree (and a one-file PATH's directory) still defines.
 * When a directory there cannot be read whole (an invalid manifest in it), a move cannot be ruled
 * out: each candidate is kept, as an orphan refused with why.
 */
export async function withoutMovedObjects(input: {
  root: string;
  prune: PlannedPrune[];
  records: Iterable<RecordWithRoot>;
  store?: StoreOf | undefined;
  /** Trees other stores applied the deletions from (prune-elsewhere.ts): read as well. */
  elsewhere?: readonly string[] | undefined;
  env: NodeJS.ProcessEnv;
  environment: string | undefined;
  loads?: ManifestLoads | undefined;
}): Promise<PlannedPrune[]> {
  if (input.prune.length === 0) return input.prune;
  const recorded = recordsSeenFrom(input.root, input.records, input.store).trees;
  const dirs = treesToRead(input.root, [...recorded, ...(input.elsewhere ?? [])]);
  const defined = new Set<string>();
  for (const dir of dirs) {
    try {
      const loaded = await loadManifestsOnce(input.loads, dir, {
        maxBytes: maxManifestBytesFrom(input.env),
        environmentsAbove: true,
        environmentRequested: input.environment !== undefined,
      });
      const { manifests, problems } = resolveForPlan(loaded, input.environment, []) ?? loaded;
      if (problems.some((p) => p.severity === "error")) throw new Error("invalid manifests");
      for (const m of manifests) defined.add(statusKey(m.manifest.kind, m.manifest.metadata.name));
    } catch {
      const why = `${dir} could not be read whole, so a move of its manifest there cannot be ruled out: apply the directory with --prune`;
      return input.prune.map((p) => unreadable(p, why));
    }
  }
  return input.prune.filter((p) => !defined.has(statusKey(p.kind, p.name)));
}
