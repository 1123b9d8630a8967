import { escapeControls } from "../../errors.js";

// Text from manifests and servers in a pull-request comment (GitHub Flavored Markdown). A file
// name, a manifest key quoted in a problem or a server's message is data: written as it was, it
// became markup there: `<img src=…>` or `![](…)` a tracking image, `@org/team` a notification to
// that team, `#12` a cross-reference, `$…$` math (a headline in any size), a bare URL a link, `<!--` a comment hiding the rest, a backtick ending the code
// span around a file name, a `|` a new table cell, a bidirectional override reordering the text.

/** One line, its control characters and bidirectional overrides written as escapes (`\u202e`). */
const printable = escapeControls;

/** A mention (`@name`, `@org/team`) or a reference (`#12`): GitHub acts on them outside code only. */
const REFERENCE = /(?<![\w`])[@#][A-Za-z0-9][\w./-]*/g;

const ENTITY: Record<string, string> = { "<": "&lt;", ">": "&gt;", "&": "&amp;" };

/** `_` inside a word (`image_uri`) is no emphasis to GitHub: left as it is, for a readable source. */
const escapeInline = (text: string): string =>
  text.replace(/[\\`*_[\]<>|~&!#$]/g, (c, at: number) =>
    c === "_" && /[\p{L}\p{N}]/u.test(text[at - 1] ?? "") && /[\p{L}\p{N}]/u.test(text[at + 1] ?? "")
      ? c
      : (ENTITY[c] ?? `\\${c}`),
  );

/** A bare URL (`https://…`, `www.…`) GitHub would make a link: an escaped `:` or `.` keeps it text. */
const unlink = (text: string): string => text.replace(/:(?=\/\/)/g, "\\:").replace(/\b(www)\./gi, "$1\\.");

/**
 * Plain text in a table cell or a list item: shown as written, never markup (no HTML, link, image,
 * emphasis or cell break); each mention or reference as code, so it notifies no one.
 */
export function markdownText(text: string): string {
  const line = printable(text);
  let out = "";
  let last = 0;
  for (const match of line.matchAll(REFERENCE)) {
    out += unlink(escapeInline(line.slice(last, match.index))) + markdownCode(match[0]);
    last = match.index + match[0].length;
  }
  return out + unlink(escapeInline(line.slice(last)));
}

/**
 * A code span holding `text` as written: its delimiter is longer than any backtick run inside, so
 * a backtick in a file name cannot end it. `inTable`: a `|` is escaped (GitHub reads `\|` as `|`
 * there, also in code), else it would end the cell.
 */
export function markdownCode(text: string, inTable = true): string {
  let content = printable(text);
  if (inTable) content = content.replace(/\|/g, "\\|");
  if (content === "") return "";
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  // A space on each side is dropped by the reader: needed when the text starts or ends with one.
  const pad = /^[` ]|[` ]$/.test(content) ? " " : "";
  return `${fence}${pad}${content}${pad}${fence}`;
}

/** Text as `<code>` inside HTML (a `<details>` summary line): `&`, `<`, `>` and `"` as entities. */
export const htmlCode = (text: string): string =>
  `<code>${printable(text).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</code>`;

/**
 * As many of `lines` as fit in `budget` characters (each with its line break), then `note(left)`
 * for the rest: a list that would pass a comment's size limit is cut, saying how much was left out.
 */
export function linesWithin(
  lines: readonly string[],
  budget: number,
  note: (left: number) => string,
): string[] {
  const kept: string[] = [];
  let size = 0;
  for (const [index, line] of lines.entries()) {
    const left = lines.length - index - 1;
    const reserve = left > 0 ? note(left).length + 1 : 0;
    if (size + line.length + 1 + reserve > budget) return [...kept, note(lines.length - index)];
    kept.push(line);
    size += line.length + 1;
  }
  return kept;
}

/** The most of one line of a change shown in a comment: a long value does not crowd out the others. */
const MAX_LINE_CHARS = 1_000;

/**
 * `line` cut to MAX_LINE_CHARS, saying how much was left out: one 70 KB value filled the comment by
 * itself, and every change after it was left out ("N more changes not shown").
 */
export function cutLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const kept = line.slice(0, MAX_LINE_CHARS).replace(/[\ud800-\udbff]$/, "");
  return `${kept}… (${line.length - kept.length} more characters not shown)`;
}
