import type { Problem } from "../types.js";
import { sortProblems } from "../validate.js";

/**
 * One line per problem: `FILE:LINE:COL: error|warning: message [code]`, sorted by file and line.
 * Control characters (a key or name from the manifest may hold them) are written as escapes: a
 * line break there started a line of its own, e.g. a CI workflow command (`::warning::`).
 */
export function formatProblems(problems: readonly Problem[]): string {
  return sortProblems(problems)
    .map((p) => escapeControls(`${p.file}:${p.line}:${p.column}: ${p.severity}: ${p.message} [${p.code}]`))
    .join("\n");
}

/** Control characters written as escapes (`\n`, `\u001b`): text of a manifest's printed on one line. */
export const escapeControls = (text: string): string =>
  // eslint-disable-next-line no-control-regex -- control characters are what this finds
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    const json = JSON.stringify(c).slice(1, -1); // `\n`, `\u001b`; DEL and C1 stay as they are there
    return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });

export type ProblemsJson = {
  problems: Array<Pick<Problem, "file" | "line" | "column" | "severity" | "code" | "field" | "message">>;
};

/** The `--output json` shape, with a fixed key order. */
export function problemsToJson(problems: readonly Problem[]): ProblemsJson {
  return {
    problems: sortProblems(problems).map(({ file, line, column, severity, code, field, message }) => ({
      file,
      line,
      column,
      severity,
      code,
      field,
      message,
    })),
  };
}

export const countProblems = (problems: readonly Problem[]) => ({
  errors: problems.filter((p) => p.severity === "error").length,
  warnings: problems.filter((p) => p.severity === "warning").length,
});
