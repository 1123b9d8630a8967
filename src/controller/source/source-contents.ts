import { join } from "node:path";
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

/**
 * Content digest of each internal_source directory by status key (an unreadable one by its error),
 * and the files read for them (absolute paths): a directory source uses the read only once they are
 * at rest too (read-at-rest.ts), so a source file caught mid-write is not uploaded.
 */
export async function digestSourceContents(
  manifests: readonly LoadedManifest[],
  root: string,
  secretFiles?: ReadonlySet<string>,
): Promise<{ contents: Map<string, string>; files: string[] }> {
  const contents = new Map<string, string>();
  const files: string[] = [];
  for (const loaded of manifests.filter(uploadsSource)) {
    const key = statusKey(loaded.manifest.kind, loaded.manifest.metadata.name);
    try {
      const tree = await readSourceTree(loaded, { root, secretFiles });
      contents.set(key, tree.digest);
      for (const entry of tree.listing) files.push(join(tree.dir, entry.path));
    } catch (error) {
      // The reconcile reports it (refused change); fixing the directory changes this and retries.
      contents.set(key, `unreadable: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { contents, files };
}
