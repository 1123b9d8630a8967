// Where a pull-request comment's facts come from: the commit, the control plane (URL without
// credentials) and tenant, and file paths as the repository knows them. Built by the CLI.

import { markdownCode } from "./markdown/markdown-text.js";

export type ReportContext = {
  commit: string | null;
  controlPlane: string;
  tenant: string | null;
  /** A manifest file (relative to the manifest root) as a path from the repository root. */
  repositoryPath: (file: string) => string;
};

/** `Commit abc123def456 · control plane \`https://cp.example.com\` · tenant t-1` (Markdown). */
export function formatContextLine(context: ReportContext): string {
  const parts = [
    context.commit ? `commit ${markdownCode(context.commit.slice(0, 12), false)}` : "not a git checkout",
    // An Environment of the pull request names them: text and code, never markup.
    `control plane ${markdownCode(context.controlPlane, false)}`,
    ...(context.tenant ? [`tenant ${markdownCode(context.tenant, false)}`] : []),
  ];
  const line = parts.join(" · ");
  return line[0]!.toUpperCase() + line.slice(1);
}
