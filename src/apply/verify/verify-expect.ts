import type { VerifyCase } from "../../schema/manifest.js";

// Pure: whether one answer meets a case's expectations. Every expectation given must hold; a case
// with none passes on any answer. Reasons quote the expectation (from the manifest), never the answer.

export type Expectations = Pick<VerifyCase, "expect_contains" | "expect_not_contains" | "expect_regex">;

/** Answers longer than this are cut before matching, so a pattern never scans an unbounded text. */
export const MAX_MATCHED_CHARS = 64 * 1024;

/** Why the answer fails the expectations, or null when it meets them all. */
export function checkExpectations(answer: string, expect: Expectations): string | null {
  const text = answer.length > MAX_MATCHED_CHARS ? answer.slice(0, MAX_MATCHED_CHARS) : answer;
  if (expect.expect_contains !== undefined && !text.includes(expect.expect_contains))
    return `the answer does not contain ${JSON.stringify(expect.expect_contains)}`;
  if (expect.expect_not_contains !== undefined && text.includes(expect.expect_not_contains))
    return `the answer contains ${JSON.stringify(expect.expect_not_contains)}`;
  if (expect.expect_regex !== undefined) {
    const pattern = compileExpectRegex(expect.expect_regex);
    if (typeof pattern === "string") return `expect_regex is not a valid regular expression: ${pattern}`;
    if (!pattern.test(text)) return `the answer does not match /${expect.expect_regex}/`;
  }
  return null;
}

/** The pattern of expect_regex, or why it is not one (validate reports that at its line). */
export function compileExpectRegex(source: string): RegExp | string {
  try {
    return new RegExp(source);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
