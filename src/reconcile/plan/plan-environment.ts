import { resolveTree } from "../../environment/resolve-tree.js";
import { UsageError } from "../../errors.js";
import type { LoadResult } from "../../manifest/load.js";

/**
 * The manifests a plan compares: one environment's view when `environment` is given
 * (docs/environments.md); the tree as loaded when the repository defines no environment. A
 * command that does not take --env yet refuses a tree that defines environments rather than
 * planning its deployments against one control plane with their overrides left out.
 */
export function resolveForPlan(
  loaded: LoadResult,
  environment: string | undefined,
  targets: readonly string[],
) {
  if (environment !== undefined) return resolveTree(loaded, environment, targets);
  if (loaded.environments?.length)
    throw new UsageError(
      `PATH defines environments (${loaded.environments.map((e) => e.manifest.metadata.name).join(", ")}), and this command does not take --env yet; use plumb plan or apply --env NAME (docs/environments.md)`,
    );
  return undefined;
}
