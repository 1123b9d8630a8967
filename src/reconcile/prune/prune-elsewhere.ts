import { realpathSync } from "node:fs";
import { join } from "node:path";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { loadUntrackedStatusStore, manifestDirOf } from "../../git/status/status-source.js";
import { realStoreDir } from "../../lock/local/real-store.js";
import { gitRootOf } from "../../manifest/environment-scan.js";
import { manifestRootDir, manifestRootOf } from "../../status/manifest-root.js";
import { directoriesBelow } from "../../status/stores-below.js";
import { defaultStatusDir } from "../../status/status-store.js";
import type { StoreOf } from "./prune-scope.js";

// A deployment can leave PATH for a directory with a store of its own (a sibling: `p/d` to `p/e`),
// and an apply there then records it as its own (same id): `apply p/d --prune` deleted it, live
// and defined in git, and the next apply of p/e created it again under a new id. So the other
// stores of the repository that record a deletion's deployment (by id) name trees to read before
// it stands (prune-moved.ts): what such a tree still defines is not deleted here.

const real = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
};

/** The directories other stores of PATH's repository applied the deletions' deployments from. */
export async function treesRecordingElsewhere(input: {
  root: string;
  prune: readonly PlannedPrune[];
  store: StoreOf;
}): Promise<string[]> {
  const ids = new Set(input.prune.filter((p) => p.action === "delete").map((p) => p.id));
  const dir = manifestDirOf(input.root);
  const top = gitRootOf(dir);
  if (ids.size === 0 || top === undefined) return [];
  const own = realStoreDir(input.store.statusDir);
  const trees = new Set<string>();
  for (const at of [top, ...(await directoriesBelow(top))]) {
    const statusDir = join(defaultStatusDir(at), input.store.environment ?? "");
    if (realStoreDir(statusDir) === own) continue;
    const records = await loadUntrackedStatusStore(statusDir).catch(() => undefined);
    for (const record of records?.objects.values() ?? []) {
      if (record.kind !== "Deployment" || record.id === null || !ids.has(record.id)) continue;
      const tree = manifestRootDir(record.manifest_root ?? manifestRootOf(real(at)), dir);
      trees.add(tree ?? real(at));
    }
  }
  return [...trees].sort();
}
