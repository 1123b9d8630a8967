import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { planPrune, type PruneScope } from "../../diff/plan/plan-prune.js";
import { sortByName } from "../../diff/values.js";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { checkEmptiedFiles } from "../../manifest/rules/emptied-rules.js";
import type { Problem } from "../../manifest/types.js";
import type { Deployment } from "../../schema/deployment.js";
import { loadUntrackedStatusStore, manifestDirOf, resolveStatusDir } from "../../git/status/status-source.js";
import { statusKey } from "../../status/status-types.js";
import { type RecordWithRoot, recordsSeenFrom, type StoreOf } from "./prune-scope.js";

// Which managed deployments are removed from git: one computation for plan/apply --prune (session.ts)
// and controller --prune (prune-sweep.ts). Only records inside the PATH read count; an emptied file
// (manifest-emptied) or a load with no object at all means nothing is removed.

/** What a load gave: the valid objects (kind, name, file) and every problem. */
export type LoadedTree = {
  objects: ReadonlyArray<{ manifest: { kind: string; metadata: { name: string } }; file: string }>;
  problems: readonly Problem[];
  /**
   * With an environment: the files of Deployments that do not run in it. Such a file still
   * defines objects, so what it recorded there is removed from git, not emptied.
   */
  elsewhere?: readonly string[] | undefined;
};

/** The one file PATH names (relative to its directory, as loaded), or the whole directory. */
function pruneScopeOf(root: string): PruneScope {
  try {
    return statSync(resolve(root)).isFile() ? { file: basename(resolve(root)) } : { file: null };
  } catch {
    return { file: null };
  }
}

const keysOf = (tree: LoadedTree) =>
  new Set(tree.objects.map((o) => statusKey(o.manifest.kind, o.manifest.metadata.name)));

/**
 * manifest-emptied errors for the files under `root` that still exist, held recorded objects, and
 * gave no object now (empty, comments only, a git-lfs pointer, a conflict marker, other kinds only).
 */
export function findEmptiedManifests(
  root: string,
  records: Iterable<RecordWithRoot>,
  tree: LoadedTree,
  store?: StoreOf,
): Problem[] {
  const dir = manifestDirOf(root);
  const scope = pruneScopeOf(root);
  const definedFiles = new Set([
    ...tree.objects.map((o) => o.file),
    ...tree.problems.filter((p) => p.severity === "error").map((p) => p.file),
    ...(tree.elsewhere ?? []),
  ]);
  return checkEmptiedFiles(
    recordsSeenFrom(root, records, store).inside,
    { definedFiles, desired: keysOf(tree) },
    (file) => existsSync(join(dir, file)),
    (file) => scope.file === null || scope.file === file,
  );
}

/**
 * manifest-emptied for `plumb validate`: against the records of the default status directory of
 * `root` (none there: nothing to compare, the no-documents warnings stand alone).
 */
export async function findEmptiedNearRoot(root: string, tree: LoadedTree): Promise<Problem[]> {
  const store = await loadUntrackedStatusStore(resolveStatusDir({ root })).catch(() => undefined);
  return store ? findEmptiedManifests(root, store.objects.values(), tree) : [];
}

export type PruneDecision =
  | { ok: true; prune: PlannedPrune[] }
  /**
   * Nothing may be judged removed: why (invalid or emptied manifests, or no object at all). With no
   * object, `kept`: what the scope read recorded, all kept as orphans, so a report of removals
   * (drift) names only those, never the rest of the store.
   */
  | { ok: false; reason: string; problems: Problem[]; kept?: PlannedPrune[] };

/**
 * The managed deployments removed from git under `root`, as plan lists them (`delete` with prune,
 * else `orphan`), after the checks that stop any prune: an invalid or emptied manifest, a load that
 * yields no object at all. `live`: the deployments as listed (only those still live are listed).
 */
export function decidePrune(input: {
  root: string;
  records: Iterable<RecordWithRoot>;
  tree: LoadedTree;
  live: readonly Deployment[];
  prune: boolean;
  /** Where the records were read (the CLI's store); undefined: PATH's own default store. */
  store?: StoreOf | undefined;
}): PruneDecision {
  const records = [...input.records];
  const errors = input.tree.problems.filter((p) => p.severity === "error");
  const emptied = findEmptiedManifests(input.root, records, input.tree, input.store);
  if (errors.length > 0 || emptied.length > 0)
    return { ok: false, reason: "invalid or emptied manifests", problems: [...errors, ...emptied] };
  const scope = pruneScopeOf(input.root);
  const { inside, untied } = recordsSeenFrom(input.root, records, input.store);
  const keys = keysOf(input.tree);
  // Objects that run in other environments only are objects: such a tree is not a wrong directory.
  if (input.tree.objects.length === 0 && (input.tree.elsewhere ?? []).length === 0) {
    const kept = planPrune(inside, keys, input.live, false, scope);
    return { ok: false, reason: "the manifests define no object", problems: [], kept };
  }
  const prune = planPrune(inside, keys, input.live, input.prune, scope);
  // A one-file prune of a store another directory may share, with records that do not say which
  // directory wrote them: the file's name matches, its directory cannot be told, so they are kept.
  const same = untied.filter((r) => r.manifest_file === scope.file);
  const kept = planPrune(same, keys, input.live, false).map((p) => ({ ...p, refused: UNTIED }));
  return { ok: true, prune: sortByName([...prune, ...kept]) };
}

const UNTIED =
  "its record does not say which directory it was applied from (written before plumb recorded it) and this --status-dir may be shared: apply the directory with --prune, or delete it by hand";
