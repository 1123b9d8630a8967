import type { Problem } from "../types.js";
import { sortProblems } from "../validate.js";

// `plumb validate --output github`: one GitHub Actions workflow command per problem, so each shows
// on the pull request's line (`::error file=F,line=L,col=C,title=CODE::message`). Escaping follows
// the Actions toolkit: `%`, CR and LF in the message; also `:` and `,` in property values.

const escapeData = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");

/**
 * Pure. `repositoryPath` turns a problem's file (relative to the manifest root) into the path
 * GitHub knows (relative to the repository root, `/` separators).
 */
export function formatGithubAnnotations(
  problems: readonly Problem[],
  repositoryPath: (file: string) => string,
): string {
  return sortProblems(problems)
    .map((p) => {
      const properties = [
        `file=${escapeProperty(repositoryPath(p.file))}`,
        `line=${p.line}`,
        `col=${p.column}`,
        `title=${escapeProperty(p.field ? `${p.code} (${p.field})` : p.code)}`,
      ].join(",");
      return `::${p.severity === "error" ? "error" : "warning"} ${properties}::${escapeData(p.message)}`;
    })
    .join("\n");
}
