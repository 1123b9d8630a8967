import { UsageError } from "../../errors.js";
import type { LoadResult } from "../../manifest/load.js";

/**
 * A controller started on a tree without environments reconciles one control plane: a scan that
 * finds environments added since fails (nothing is sent, the last snapshot stays) instead of
 * reconciling every deployment's base spec against that control plane; a restart reconciles them
 * per environment (docs/environments.md). A tree loaded on the worker thread may carry no
 * Environment documents back, so a Deployment that names environments tells it too.
 */
export function refuseEnvironments(result: LoadResult): LoadResult {
  const defined = result.environments?.map((e) => e.manifest.metadata.name) ?? [];
  const named = result.manifests.find(
    (m) => m.manifest.kind === "Deployment" && (m.manifest.environments ?? m.manifest.metadata.environments),
  );
  if (defined.length > 0 || named)
    throw new UsageError(
      `${named ? `${named.file}: ` : ""}the manifests now define environments${defined.length ? ` (${defined.join(", ")})` : ""}; restart the controller to reconcile each environment against its own control plane (docs/environments.md)`,
    );
  return result;
}
