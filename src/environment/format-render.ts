import { stringify } from "yaml";
import type { LoadedManifest } from "../manifest/types.js";

// `plumb render`: the resolved manifests as plain YAML documents, what plan compares (like
// `kustomize build`). Each starts with a comment naming its environment and source file. A value
// holding line breaks (a literal secret such as a PEM key, a command) is written double-quoted on
// one line (`\n`), never as a block scalar: each line of one started a line of the output, and a
// line reading `::warning::…` or `::add-mask::…` (CI runners trim leading spaces) was run as a
// workflow command. Read back, it is the same value.

export type RenderedEnvironment = { environment: string | null; manifests: readonly LoadedManifest[] };

export function formatRender(environments: readonly RenderedEnvironment[]): string {
  const documents: string[] = [];
  for (const { environment, manifests } of environments) {
    for (const loaded of manifests) {
      const where = environment === null ? "" : `environment ${environment}, `;
      const header = `# ${where}from ${loaded.file}:${loaded.location.line}\n`;
      documents.push(
        header + stringify(loaded.manifest, { lineWidth: 0, blockQuote: false, doubleQuotedAsJSON: true }),
      );
    }
  }
  return documents.join("---\n");
}
