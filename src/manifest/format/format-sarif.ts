import type { Problem } from "../types.js";
import { sortProblems } from "../validate.js";

// `plumb validate --output sarif`: a SARIF 2.1.0 log (the OASIS format code scanning reads, e.g.
// GitHub's upload-sarif), one result per problem with its rule (the problem code), level and
// location relative to the repository root (%SRCROOT%). Pure.

type SarifLevel = "error" | "warning";

/**
 * A relative URI reference of a repository path: each segment percent-encoded. encodeURI left `#`
 * and `?` as they were, so `a#b.yaml` named the file `a` with a fragment (code scanning showed the
 * problem on no file).
 */
const uriOf = (path: string) => path.split("/").map(encodeURIComponent).join("/");

export function formatSarif(
  problems: readonly Problem[],
  repositoryPath: (file: string) => string,
  tool: { name: string; version: string },
): string {
  const sorted = sortProblems(problems);
  const rules = [...new Set(sorted.map((p) => p.code))].sort();
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: tool.name,
            semanticVersion: tool.version,
            rules: rules.map((id) => ({ id, name: ruleName(id), shortDescription: { text: id } })),
          },
        },
        columnKind: "unicodeCodePoints",
        results: sorted.map((p) => ({
          ruleId: p.code,
          ruleIndex: rules.indexOf(p.code),
          level: (p.severity === "error" ? "error" : "warning") satisfies SarifLevel,
          message: { text: p.field ? `${p.message} (${p.field})` : p.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: uriOf(repositoryPath(p.file)), uriBaseId: "%SRCROOT%" },
                region: { startLine: Math.max(1, p.line), startColumn: Math.max(1, p.column) },
              },
            },
          ],
        })),
      },
    ],
  };
  return JSON.stringify(log, null, 2);
}

/** `unknown-field` → `UnknownField`: SARIF's rule name is an identifier-like word. */
const ruleName = (code: string) =>
  code
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
