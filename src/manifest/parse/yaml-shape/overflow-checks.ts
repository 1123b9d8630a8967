import type { Problem, SourceLocation } from "../../types.js";
import { problem } from "./shape-problem.js";

// Linear looks at the raw text, before the parser recurses: nesting and runs of empty documents
// deep enough to overflow its stack.

/** Far past MAX_NESTING, where the parsers' recursion gets slow and then overflows. */
const HOPELESS_DEPTH = 1000;

/**
 * A linear look at the raw text before any parser recurses: the offset where flow brackets, or a
 * line's run of `- ` list markers, nest past HOPELESS_DEPTH; undefined otherwise. Quoted strings
 * and comments are skipped; the precise MAX_NESTING check runs on the parsed tree.
 */
export function hopelessNestingAt(text: string): number | undefined {
  // Each level costs a bracket or a "- ": a text with few of them cannot nest that deep, and
  // counting them is native work (most manifests skip the character walk below).
  if (
    occurrences(text, "[") + occurrences(text, "{") <= HOPELESS_DEPTH &&
    occurrences(text, "-") <= HOPELESS_DEPTH
  )
    return undefined;
  let depth = 0;
  let quote = "";
  let lineStart = true;
  let dashes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === "\n") {
      lineStart = true;
      dashes = 0;
      continue;
    }
    if (lineStart && c === "-" && (text[i + 1] === " " || text[i + 1] === "\n")) {
      if (++dashes > HOPELESS_DEPTH) return i;
      continue;
    }
    if (c !== " ") lineStart = false;
    if (c === '"' || c === "'") quote = c;
    else if (c === "#") while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    else if (c === "[" || c === "{") {
      if (++depth > HOPELESS_DEPTH) return i;
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return undefined;
}

/**
 * Empty documents (`---` lines with only blanks or a comment after them) one file may hold in a
 * row. The parser's lexer recurses once for each: some 5,000 in a row overflowed its stack, said as
 * "cannot parse YAML: Maximum call stack size exceeded" at 1:1. No manifest holds more than a few.
 */
export const MAX_EMPTY_DOCUMENTS = 1000;

const EMPTY_DOCUMENT_START = /^---[ \t]*(#.*)?\r?$/;

/** The offset of the first line of a run of more than MAX_EMPTY_DOCUMENTS empty documents; undefined if none. */
export function emptyDocumentRunAt(text: string): number | undefined {
  if (occurrences(text, "---") <= MAX_EMPTY_DOCUMENTS) return undefined;
  let run = 0;
  let runStart = 0;
  let offset = 0;
  for (const line of text.split("\n")) {
    if (!EMPTY_DOCUMENT_START.test(line)) run = 0;
    else if (run++ === 0) runStart = offset;
    else if (run > MAX_EMPTY_DOCUMENTS) return runStart;
    offset += line.length + 1;
  }
  return undefined;
}

export const tooManyEmptyDocuments = (at: SourceLocation): Problem =>
  problem(
    at,
    "too-many-empty-documents",
    `more than ${MAX_EMPTY_DOCUMENTS} empty documents in a row from here (--- lines with nothing between them), more than the YAML parser can read; remove the extra --- lines`,
  );

/** How many times `char` occurs in `text`, stopping once past HOPELESS_DEPTH. */
function occurrences(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= HOPELESS_DEPTH; at = text.indexOf(char, at + 1))
    count++;
  return count;
}
