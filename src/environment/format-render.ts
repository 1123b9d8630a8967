import { stringify } from "yaml";
import type { LoadedManifest } from "../manifest/types.js";

// `plumb render`: the resolved manifests as plain YAML documents, what plan compares (like
// `kustomize build`). Each starts with a comment naming its environment and source file.

export type RenderedEnvironment = { environment: string | null; manifests: readonly LoadedManifest[] };

export function formatRender(environments: readonly RenderedEnvironment[]): string {
  const documents: string[] = [];
  for (const { environment, manifests } of environments) {
    for (const loaded of manifests) {
      const where = environment === null ? "" : `environment ${environment}, `;
      const header = `# ${where}from ${loaded.file}:${loaded.location.line}\n`;
      documents.push(header + stringify(loaded.manifest, { lineWidth: 0 }));
    }
  }
  return documents.join("---\n");
}
