// Where a pull-request comment's facts come from: the commit, the control plane (URL without
// credentials) and tenant, and file paths as the repository knows them. Built by the CLI.

export type ReportContext = {
  commit: string | null;
  controlPlane: string;
  tenant: string | null;
  /** A manifest file (relative to the manifest root) as a path from the repository root. */
  repositoryPath: (file: string) => string;
};

/** `Commit abc123def456 · control plane https://cp.example.com · tenant t-1` (Markdown). */
export function formatContextLine(context: ReportContext): string {
  const parts = [
    context.commit ? `commit \`${context.commit.slice(0, 12)}\`` : "not a git checkout",
    `control plane ${context.controlPlane}`,
    ...(context.tenant ? [`tenant \`${context.tenant}\``] : []),
  ];
  const line = parts.join(" · ");
  return line[0]!.toUpperCase() + line.slice(1);
}
