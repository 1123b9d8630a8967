import { readSourceTree } from "../../manifest/source/source-tree.js";
import type { LoadedManifest } from "../../manifest/types.js";
import { statusKey } from "../../status/status-types.js";
import type { DeploymentManifest } from "../../schema/manifest.js";

// internal_source deployments are built from a directory (spec.source_path): a saved file there is a
// change of that deployment even though its manifest did not change. The scan folds the directory's
// content digest into the object's digest (buildSnapshot), so the edit reconciles it.

const uploadsSource = (loaded: LoadedManifest): loaded is LoadedManifest<DeploymentManifest> =>
  loaded.manifest.kind === "Deployment" &&
  loaded.manifest.spec.source === "internal_source" &&
  Boolean(loaded.manifest.spec.source_path);

/** Content digest of each internal_source directory by status key; an unreadable one by its error. */
export async function digestSourceContents(
  manifests: readonly LoadedManifest[],
  root: string,
  secretFiles?: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const contents = new Map<string, string>();
  for (const loaded of manifests.filter(uploadsSource)) {
    const key = statusKey(loaded.manifest.kind, loaded.manifest.metadata.name);
    try {
      contents.set(key, (await readSourceTree(loaded, { root, secretFiles })).digest);
    } catch (error) {
      // The reconcile reports it (refused change); fixing the directory changes this and retries.
      contents.set(key, `unreadable: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return contents;
}
