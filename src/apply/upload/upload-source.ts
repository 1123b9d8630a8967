import type { PlannedChange } from "../../diff/plan/plan-types.js";
import { PlumbError } from "../../errors.js";
import type { ApplyPorts } from "../ports.js";
import type { SendContext } from "../engine-types.js";

/** A change's source, packed before anything is sent (packing checks it is still the planned content). */
export type PackedSource = { digest: string; bytes: Uint8Array };

export async function packChangeSource(change: PlannedChange, ctx: SendContext): Promise<PackedSource> {
  const upload = change.upload;
  if (!upload || !ctx.source || ctx.source.digest !== upload.digest)
    throw new PlumbError(
      "plan-invalid",
      `${change.name}: the source to upload was not prepared with the plan`,
    );
  return { digest: upload.digest, bytes: await ctx.source.pack() };
}

/**
 * Asks for an upload URL and PUTs the tarball. Both calls may be repeated safely (the client
 * retries them): an upload only matters once a PATCH names its object path.
 */
export async function uploadSource(
  ports: ApplyPorts,
  change: PlannedChange,
  deploymentId: string,
  packed: PackedSource,
  ctx: SendContext,
): Promise<{ digest: string; object_path: string }> {
  if (!ports.uploads)
    throw new PlumbError(
      "no-upload-client",
      `${change.name}: uploading a source needs the control plane's upload API`,
    );
  const opts = { signal: ctx.signal };
  const { upload_url, object_path } = await ports.uploads.createUploadUrl(deploymentId, opts);
  await ports.uploads.uploadTarball(upload_url, packed.bytes, opts);
  return { digest: packed.digest, object_path };
}
