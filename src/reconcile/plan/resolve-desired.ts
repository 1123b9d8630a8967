import type { SecretRedactor } from "../../api/secret-redactor.js";
import type { DesiredObject } from "../../diff/plan/build-plan.js";
import type { ChangeError } from "../../diff/plan/plan-types.js";
import { isPlumbError } from "../../errors.js";
import { loadSecretValues } from "../../manifest/secrets.js";
import { readSourceTree } from "../../manifest/source/source-tree.js";
import type { LoadedManifest } from "../../manifest/types.js";
import type { DeploymentManifest } from "../../schema/manifest.js";

// The I/O a plan needs per manifest, at the edge: secret values and the digest of spec.source_path.
// A value or directory that cannot be read blocks that object only (its change is refused).

export type ResolveOptions = {
  root: string;
  env: NodeJS.ProcessEnv;
  /** The run's redactor: learns every secret value resolved here. */
  redactor?: SecretRedactor | undefined;
  /** Real paths of every manifest's `valueFrom.file` secrets: never part of a source upload. */
  secretFiles?: ReadonlySet<string> | undefined;
};

async function attempt<T>(
  field: string,
  errors: ChangeError[],
  read: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (!isPlumbError(error)) throw error;
    errors.push({ field, message: error.message });
    return undefined;
  }
}

/** One manifest ready for buildPlan: secrets resolved, internal_source content digested. */
export async function resolveDesiredObject(
  loaded: LoadedManifest,
  options: ResolveOptions,
): Promise<DesiredObject> {
  if (loaded.manifest.kind !== "Deployment") return { loaded };
  const deployment = loaded as LoadedManifest<DeploymentManifest>;
  const { spec } = deployment.manifest;
  const errors: ChangeError[] = [];
  const desired: DesiredObject = { loaded };
  if (spec.secrets) {
    const secrets = await attempt("secrets", errors, () => loadSecretValues(deployment, options));
    if (secrets) desired.secrets = secrets;
    options.redactor?.add((secrets ?? []).map((secret) => secret.value));
  }
  if (spec.source === "internal_source" && spec.source_path) {
    const tree = await attempt("source_path", errors, () =>
      readSourceTree(deployment, { root: options.root, secretFiles: options.secretFiles }),
    );
    if (tree)
      desired.source = {
        source_path: tree.sourcePath,
        digest: tree.digest,
        files: tree.listing,
        secret_files: tree.secretFiles,
      };
  }
  if (errors.length > 0) desired.errors = errors;
  return desired;
}
