import type { Problem } from "../types.js";
import { sortProblems } from "../validate.js";
import { escapeControls } from "../../errors.js";

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

export { escapeControls };

/**
 * Text of many lines read from files or servers (a unified diff of a manifest), each line made safe
 * to print in a terminal and a CI log: its control characters escaped (escapeControls, so no line
 * breaks in two), and a line whose first characters after blanks are `::` written with that first
 * colon as `\u003a`. A CI runner trims a line and runs it as a workflow command when it starts
 * with `::` (`::add-mask::`, `::warning::`, `::stop-commands::`): a manifest's block scalar or a
 * live value's lines printed as a diff's context did.
 */
export const escapeLines = (text: string): string =>
  text
    .split("\n")
    .map((line) => escapeControls(line).replace(/^(\s*):(?=:)/u, "$1\\u003a"))
    .join("\n");

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
