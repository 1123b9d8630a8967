import { UsageError } from "../../errors.js";
import type { LoadResult } from "../../manifest/load.js";
import { resolveForPlan } from "../../reconcile/plan-environment.js";

/**
 * The controller does not reconcile environments yet (docs/environments.md, planned): a tree that
 * defines any fails its scan (nothing is sent, the last snapshot stays) instead of reconciling
 * every deployment's base spec against one control plane. A tree loaded on the worker thread
 * carries no Environment documents back, so a Deployment that names environments tells it too.
 */
export function refuseEnvironments(result: LoadResult): LoadResult {
  resolveForPlan(result, undefined, []);
  const named = result.manifests.find(
    (m) => m.manifest.kind === "Deployment" && (m.manifest.environments ?? m.manifest.metadata.environments),
  );
  if (named)
    throw new UsageError(
      `${named.file}: the manifests define environments, which the controller does not reconcile yet (docs/environments.md)`,
    );
  return result;
}
