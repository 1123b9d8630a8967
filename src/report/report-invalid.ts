import { countProblems, formatProblems, problemsToJson } from "../manifest/format/format.js";
import { sortProblems } from "../manifest/validate.js";
import type { Problem } from "../manifest/types.js";
import { MARKDOWN_LIMIT } from "./markdown/format-markdown.js";
import { cutLine, linesWithin, markdownCode, markdownText } from "./markdown/markdown-text.js";
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

/**
 * For a pull-request comment: the problems as a table a reviewer can read, the tally last; under the
 * comment size limit (a tree of many broken files is cut, with a note). A problem quotes the
 * manifest (a key, a value), so its words are text, never markup (markdown-text.ts).
 */
export function formatProblemsMarkdown(
  problems: readonly Problem[],
  tally: string,
  limit = MARKDOWN_LIMIT,
): string {
  const rows = sortProblems(problems).map(
    (p) =>
      `| ${markdownCode(`${p.file}:${p.line}:${p.column}`)} | ${p.severity} | ${markdownCode(p.code)} | ${markdownText(cutLine(p.field ? `${p.field}: ${p.message}` : p.message))} |`,
  );
  const head = [
    "### plumb: invalid manifests",
    "",
    "Nothing was planned or sent: fix these (`plumb validate` shows the same) and push again.",
    "",
    "| Location | Severity | Code | Problem |",
    "| --- | --- | --- | --- |",
  ];
  const tail = ["", `**${tally}**`, ""];
  const note = (left: number) =>
    `\n> **Truncated:** ${count(left, "more problem")} not shown to stay under the comment size limit; \`plumb validate\` lists them all.`;
  const budget = limit - [...head, ...tail].join("\n").length - 1;
  return [...head, ...linesWithin(rows, budget, note), ...tail].join("\n");
}
