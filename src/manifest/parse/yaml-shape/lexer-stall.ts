import type { Problem, SourceLocation } from "../../types.js";
import { problem } from "./shape-problem.js";

// A text on which yaml's lexer would loop for ever, found before it runs (yaml-text.ts, parse.ts).
//
// yaml 3.0.0-2's lexer reads the lines between documents (before a stream's first content line,
// and after a `...` line) with patterns whose `$` also ends a line at a lone CR, U+2028 or U+2029,
// and then steps over LF and CRLF only: at such a character it makes no progress and loops
// forever. `# note\u2028` as a file's first line, or a file in old Mac line ends (CR), hung
// validate and the controller's loader for good. Its patterns, copied:
const STALL_CHARACTER = /\r(?!\n)|[\u2028\u2029]/;
const DIRECTIVE_LINE = /(%(?:[^ \t\n\r]|[ \t](?![\n\r#]))*)([ \t]*)(#.*)?$/my;
const EMPTY_LINE_OR_COMMENT = /([ \t]*)(#.*)?$/my;
const DOCUMENT_END_LINE = /^\.\.\.(?=[ \n\r\t]|$)(?:[ \t]+(?:#.*)?)?/gm;

/** The lexer's step over a line break at `at`: LF or CRLF, nothing else. */
const lineBreakAt = (text: string, at: number) =>
  text[at] === "\n" ? 1 : text.startsWith("\r\n", at) ? 2 : 0;

/**
 * The offset where yaml's lexer would loop forever (see above), or undefined. Lines that start
 * with `...` inside a block scalar or a quoted string are taken as document ends too: a text
 * refused for that alone holds a lone CR, U+2028 or U+2029 just after such a line.
 */
export function lexerStallAt(text: string): number | undefined {
  if (!STALL_CHARACTER.test(text)) return undefined;
  const starts = [0];
  for (const end of text.matchAll(DOCUMENT_END_LINE)) {
    const after = end.index + end[0].length;
    starts.push(after + lineBreakAt(text, after));
  }
  for (let pos of starts) {
    while (pos < text.length) {
      if (text[pos] === "\ufeff") {
        pos++;
        continue;
      }
      DIRECTIVE_LINE.lastIndex = pos;
      EMPTY_LINE_OR_COMMENT.lastIndex = pos;
      const line = DIRECTIVE_LINE.exec(text) ?? EMPTY_LINE_OR_COMMENT.exec(text);
      if (!line) break; // a content line: the lexer goes on into a document
      const next = pos + line[0].length;
      const after = next + lineBreakAt(text, next);
      if (after === pos) return pos;
      pos = after;
    }
  }
  return undefined;
}

export const lexerStall = (at: SourceLocation): Problem =>
  problem(
    at,
    "yaml-line-break",
    "a lone carriage return (CR without LF), U+2028 or U+2029 ends a blank, comment or directive line here, which the YAML parser cannot read past; use LF or CRLF line ends",
  );
