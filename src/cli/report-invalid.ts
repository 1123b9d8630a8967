import { countProblems, formatProblems, problemsToJson } from "../manifest/format.js";
import type { Problem } from "../manifest/types.js";
import { count } from "../diff/plural.js";

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
  out.write(
    `${formatProblems(problems)}\n${count(errors, "error")}, ${count(warnings, "warning")}: ${skipped}\n`,
  );
}
