import { countProblems, formatProblems, problemsToJson } from "../manifest/format/format.js";
import { sortProblems } from "../manifest/validate.js";
import type { Problem } from "../manifest/types.js";
import { count } from "./plural.js";

/**
 * What plan, drift and apply print when the manifests are invalid (the validate output) before any
 * API call: the problems as JSON, or as `file:line:col` lines plus a count saying what was skipped.
 */
export function reportInvalidManifests(
  out: { write(text: string): unknown },
  problems: readonly Problem[],
  output: string,
  skipped: string,
): void {
  if (output === "json") {
    out.write(`${JSON.stringify(problemsToJson(problems), null, 2)}\n`);
    return;
  }
  const { errors, warnings } = countProblems(problems);
  const tally = `${count(errors, "error")}, ${count(warnings, "warning")}: ${skipped}`;
  if (output === "markdown") {
    out.write(formatProblemsMarkdown(problems, tally));
    return;
  }
  out.write(`${formatProblems(problems)}\n${tally}\n`);
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** For a pull-request comment: the problems as a table a reviewer can read, the tally last. */
function formatProblemsMarkdown(problems: readonly Problem[], tally: string): string {
  const rows = sortProblems(problems).map(
    (p) =>
      `| \`${cell(`${p.file}:${p.line}:${p.column}`)}\` | ${p.severity} | \`${cell(p.code)}\` | ${cell(p.field ? `${p.field}: ${p.message}` : p.message)} |`,
  );
  return [
    "### plumb: invalid manifests",
    "",
    "Nothing was planned or sent: fix these (`plumb validate` shows the same) and push again.",
    "",
    "| Location | Severity | Code | Problem |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    `**${tally}**`,
    "",
  ].join("\n");
}
