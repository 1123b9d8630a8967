import type { CST } from "yaml";
import { type Read, unsure } from "./cst-scalar.js";

// Block scalars (`|` and `>`) for cst-compose.ts: yaml 3.0.0-2's compose/resolve-block-scalar.ts
// ported line for line; wherever it would report an error, `unsure()` leaves the file to yaml.

/** yaml's parseBlockScalarHeader; anything it would report is `unsure()`. */
function blockHeader(props: readonly CST.Token[]): {
  folded: boolean;
  indent: number;
  chomp: string;
  length: number;
} {
  const [first, ...rest] = props;
  if (first?.type !== "block-scalar-header") return unsure();
  const { source } = first;
  let indent = 0;
  let chomp = "";
  for (let i = 1; i < source.length; ++i) {
    const ch = source[i]!;
    if (!chomp && (ch === "-" || ch === "+")) chomp = ch;
    else if (!indent && Number(ch)) indent = Number(ch);
    else unsure();
  }
  let hasSpace = false;
  let length = source.length;
  for (const token of rest) {
    if (token.type === "space") hasSpace = true;
    else if (token.type === "comment" && !hasSpace) unsure();
    else if (token.type !== "newline" && token.type !== "comment") unsure();
    length += (token as CST.SourceToken).source.length;
  }
  return { folded: source[0] === ">", indent, chomp, length };
}

/** yaml's splitLines: each line as [indent, content]. */
function splitLines(source: string): Array<[string, string]> {
  const split = source.split(/\n( *)/);
  const first = split[0]!;
  const indent = /^( *)/.exec(first)![1]!;
  const lines: Array<[string, string]> = [[indent, first.slice(indent.length)]];
  for (let i = 1; i < split.length; i += 2) lines.push([split[i]!, split[i + 1]!]);
  return lines;
}

/** yaml's resolveBlockScalar (literal | and folded >); whatever it would report is `unsure()`. */
export function blockScalar(token: CST.BlockScalar, atRoot: boolean): Read {
  const header = blockHeader(token.props);
  const end = token.offset + header.length + token.source.length;
  const lines = token.source ? splitLines(token.source) : [];
  let chompStart = lines.length;
  for (let i = lines.length - 1; i >= 0; --i) {
    const content = lines[i]![1];
    if (content === "" || content === "\r") chompStart = i;
    else break;
  }
  if (chompStart === 0) {
    const value = header.chomp === "+" && lines.length > 0 ? "\n".repeat(Math.max(1, lines.length - 1)) : "";
    return { value, end };
  }
  let trimIndent = token.indent + header.indent;
  let contentStart = 0;
  for (let i = 0; i < chompStart; ++i) {
    const [indent, content] = lines[i]!;
    if (content === "" || content === "\r") {
      if (header.indent === 0 && indent.length > trimIndent) trimIndent = indent.length;
    } else {
      if (indent.length < trimIndent) unsure();
      if (header.indent === 0) trimIndent = indent.length;
      contentStart = i;
      if (trimIndent === 0 && !atRoot) unsure();
      break;
    }
  }
  for (let i = lines.length - 1; i >= chompStart; --i)
    if (lines[i]![0].length > trimIndent) chompStart = i + 1;
  let value = "";
  for (let i = 0; i < contentStart; ++i) value += lines[i]![0].slice(trimIndent) + "\n";
  value += blockBody(lines.slice(contentStart, chompStart), trimIndent, header.folded);
  if (header.chomp === "+") {
    for (let i = chompStart; i < lines.length; ++i) value += "\n" + lines[i]![0].slice(trimIndent);
    if (value[value.length - 1] !== "\n") value += "\n";
  } else if (header.chomp !== "-") value += "\n";
  return { value, end };
}

/** The content lines of a block scalar, kept (literal) or folded, as resolveBlockScalar joins them. */
function blockBody(lines: ReadonlyArray<[string, string]>, trimIndent: number, folded: boolean): string {
  let value = "";
  let sep = "";
  let prevMoreIndented = false;
  for (const [indent, raw] of lines) {
    const content = raw[raw.length - 1] === "\r" ? raw.slice(0, -1) : raw;
    if (content && indent.length < trimIndent) unsure();
    if (!folded) {
      value += sep + indent.slice(trimIndent) + content;
      sep = "\n";
    } else if (indent.length > trimIndent || content[0] === "\t") {
      if (sep === " ") sep = "\n";
      else if (!prevMoreIndented && sep === "\n") sep = "\n\n";
      value += sep + indent.slice(trimIndent) + content;
      sep = "\n";
      prevMoreIndented = true;
    } else if (content === "") {
      if (sep === "\n") value += "\n";
      else sep = "\n";
    } else {
      value += sep + content;
      sep = " ";
      prevMoreIndented = false;
    }
  }
  return value;
}
