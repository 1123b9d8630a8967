import { stringify } from "yaml";
import type { LoadedManifest } from "../manifest/types.js";

// `plumb render`: the resolved manifests as plain YAML documents, what plan compares (like
// `kustomize build`). Each starts with a comment naming its environment and source file. A value
// holding line breaks (a literal secret such as a PEM key, a command) is written double-quoted on
// one line (`\n`), never as a block scalar: each line of one started a line of the output, and a
// line reading `::warning::…` or `::add-mask::…` (CI runners trim leading spaces) was run as a
// workflow command. Read back, it is the same value. A secret's literal `value` is printed as
// "(sensitive)", as plan and diff show it: render's output goes to CI logs, which are read more
// widely than the repository and kept elsewhere.

/** What a secret's literal `value` is printed as: render never prints a secret value, as plan and diff. */
const SENSITIVE = "(sensitive)";

/** The manifest with each secret's literal value replaced (its name and valueFrom kept). */
function withoutSecretValues(manifest: LoadedManifest["manifest"]): unknown {
  const spec = (manifest as { spec?: { secrets?: unknown } }).spec;
  if (!spec || !Array.isArray(spec.secrets)) return manifest;
  const secrets = spec.secrets.map((secret: unknown) =>
    typeof secret === "object" && secret !== null && "value" in secret
      ? { ...secret, value: SENSITIVE }
      : secret,
  );
  return { ...manifest, spec: { ...spec, secrets } };
}

export type RenderedEnvironment = { environment: string | null; manifests: readonly LoadedManifest[] };

export function formatRender(environments: readonly RenderedEnvironment[]): string {
  const documents: string[] = [];
  for (const { environment, manifests } of environments) {
    for (const loaded of manifests) {
      const where = environment === null ? "" : `environment ${environment}, `;
      const header = `# ${where}from ${loaded.file}:${loaded.location.line}\n`;
      documents.push(
        header +
          stringify(withoutSecretValues(loaded.manifest), {
            lineWidth: 0,
            blockQuote: false,
            doubleQuotedAsJSON: true,
          }),
      );
    }
  }
  return documents.join("---\n");
}
