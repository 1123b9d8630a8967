import { stat } from "node:fs/promises";
import type { PlannedPrune } from "../../diff/plan/plan-types.js";
import { loadManifestsOnce, type ManifestLoads } from "../../manifest/load.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import { manifestDirOf } from "../../git/status-source.js";
import { statusKey } from "../../status/status-types.js";
import { resolveForPlan } from "../plan/plan-environment.js";

// A one-file PATH judges only the objects recorded in that file (plan-prune.ts). An object that
// left the file may have moved to another file of the same directory (split, merged, renamed in
// an edit): it is still in git there, and deleting it would take a live deployment down until the
// next apply of the directory creates it again under a new id. So before such a prune stands, the
// directory the file lies in (its status store's) is read: what it still defines is not removed.

const unreadable = (p: PlannedPrune, why: string): PlannedPrune => ({ ...p, action: "orphan", refused: why });

/**
 * `prune` without the objects the one file `root`'s directory still defines elsewhere. When that
 * directory cannot be read whole (an invalid manifest in it), a move cannot be ruled out: each
 * candidate is kept, as an orphan refused with why. A directory PATH's list is returned as it is.
 */
export async function withoutMovedObjects(input: {
  root: string;
  prune: PlannedPrune[];
  env: NodeJS.ProcessEnv;
  environment: string | undefined;
  loads?: ManifestLoads | undefined;
}): Promise<PlannedPrune[]> {
  if (input.prune.length === 0 || (await stat(input.root)).isDirectory()) return input.prune;
  const dir = manifestDirOf(input.root);
  let defined: Set<string>;
  try {
    const loaded = await loadManifestsOnce(input.loads, dir, {
      maxBytes: maxManifestBytesFrom(input.env),
      environmentsAbove: true,
      environmentRequested: input.environment !== undefined,
    });
    const { manifests, problems } = resolveForPlan(loaded, input.environment, []) ?? loaded;
    if (problems.some((p) => p.severity === "error")) throw new Error("invalid manifests");
    defined = new Set(manifests.map((m) => statusKey(m.manifest.kind, m.manifest.metadata.name)));
  } catch {
    const why = `${dir} could not be read whole, so a move of its manifest to another file there cannot be ruled out: apply the directory with --prune`;
    return input.prune.map((p) => unreadable(p, why));
  }
  return input.prune.filter((p) => !defined.has(statusKey(p.kind, p.name)));
}
