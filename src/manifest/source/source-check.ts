import { isPlumbError } from "../../errors.js";
import type { DeploymentManifest } from "../../schema/manifest.js";
import { readSourceTree, secretFilesOf } from "./source-tree.js";
import type { LoadedManifest, Problem } from "../types.js";

// `plumb validate` looks into internal_source directories for what must never be uploaded: a
// symlink out of the directory or into a .git (source-unsafe-entry), at the manifest's source_path.
// A directory that is missing or unreadable is plan's concern (validate runs without the sources).

const uploadsSource = (loaded: LoadedManifest): loaded is LoadedManifest<DeploymentManifest> =>
  loaded.manifest.kind === "Deployment" &&
  loaded.manifest.spec.source === "internal_source" &&
  Boolean(loaded.manifest.spec.source_path);

/** One `source-unsafe-entry` problem per internal_source directory that holds an unsafe entry. */
export async function checkSourceEntries(
  manifests: readonly LoadedManifest[],
  root: string,
): Promise<Problem[]> {
  const secretFiles = await secretFilesOf(manifests, root);
  const problems: Problem[] = [];
  for (const loaded of manifests.filter(uploadsSource)) {
    try {
      await readSourceTree(loaded, { root, secretFiles });
    } catch (error) {
      if (!isPlumbError(error) || error.code !== "source-unsafe-entry") continue;
      const at = loaded.locate(["spec", "source_path"]);
      const prefix = `${at.file}:${at.line}:${at.column}: `;
      const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      problems.push({
        ...at,
        severity: "error",
        code: "source-unsafe-entry",
        field: "spec.source_path",
        message,
      });
    }
  }
  return problems;
}
