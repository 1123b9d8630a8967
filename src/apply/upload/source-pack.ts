import { PlumbError } from "../../errors.js";
import { shortDigest } from "../../manifest/source/source-digest.js";
import { readSourceTree } from "../../manifest/source/source-tree.js";
import type { LoadedManifest } from "../../manifest/types.js";
import type { DeploymentManifest } from "../../schema/manifest.js";
import { buildTarball } from "./tarball.js";

/** The control plane's limit for one upload (docs/control-plane.md). */
const MAX_TARBALL_BYTES = 64 * 1024 * 1024;

/**
 * Reads spec.source_path again at apply time and packs it. The content must still be the one the
 * plan showed (its digest), so what is uploaded is what was reviewed; the tarball must fit the
 * upload limit.
 */
export async function packSource(
  loaded: LoadedManifest<DeploymentManifest>,
  root: string,
  plannedDigest: string,
  /** The secret files the plan left out (DesiredSource.secret_files): the same list, the same digest. */
  secretFiles: readonly string[] = [],
  maxBytes = MAX_TARBALL_BYTES,
): Promise<Uint8Array> {
  const tree = await readSourceTree(loaded, { root, withBytes: true, secretFiles });
  if (tree.digest !== plannedDigest)
    throw new PlumbError(
      "source-changed",
      `source_path ${tree.sourcePath} changed since it was planned (${shortDigest(plannedDigest)} → ${shortDigest(tree.digest)}); run apply again to plan the new content`,
    );
  const tarball = buildTarball(tree.files);
  if (tarball.length > maxBytes)
    throw new PlumbError(
      "source-too-large",
      `source_path ${tree.sourcePath} packs to ${tarball.length} bytes, over the upload limit of ${maxBytes}; keep build outputs and dependencies out of it`,
    );
  return tarball;
}
