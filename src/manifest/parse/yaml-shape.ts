import { type CST, type Document, type Node, Scalar, YAMLMap, YAMLSeq } from "yaml";
import type { Problem, SourceLocation } from "../types.js";

// Checks on the parsed YAML tree that the `yaml` package does not do. It reports a key repeated
// as such (DUPLICATE_KEY, a parse error); keys that are equal only once read as JavaScript object
// keys (`1` and "1") are found here with one set per mapping. Everything is iterative: a hostile
// file nests deep enough to overflow any recursive walk.

/** Levels of mappings and lists a manifest may nest; real manifests use fewer than ten. */
export const MAX_NESTING = 64;

const problem = (at: SourceLocation, code: string, message: string): Problem => ({
  ...at,
  severity: "error",
  code,
  field: "",
  message,
});

export const tooDeep = (at: SourceLocation): Problem =>
  problem(at, "too-deep", `nested more than ${MAX_NESTING} levels deep; manifests are far shallower`);

/**
 * A plain `<<` key: YAML 1.1's merge key, which YAML 1.2 (plumb's core schema) does not have. Read
 * as written it is a field named "<<" (an unknown field, or a label of a mapping's value), which
 * is not what its author meant; plumb refuses it where it stands instead of merging.
 */
const isMergeKey = (key: Scalar | null): boolean =>
  key !== null && key.value === "<<" && (key.type === undefined || key.type === Scalar.PLAIN);

const MERGE_KEY_MESSAGE =
  'YAML merge keys ("<<") are not supported (YAML 1.2 has none): write the fields in this mapping; an alias can still stand for a whole value ("labels: *common")';

/** Duplicate and merge keys, keys that are not plain scalars, and nesting past MAX_NESTING, in one pass. */
export function checkYamlShape(doc: Document, at: (offset: number) => SourceLocation): Problem[] {
  const problems: Problem[] = [];
  let reportedDepth = false;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.value, depth: 1 }];
  const offset = (node: unknown) => (node as Node | null)?.range?.[0] ?? 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!(node instanceof YAMLMap) && !(node instanceof YAMLSeq)) continue;
    if (depth > MAX_NESTING) {
      if (!reportedDepth) problems.push(tooDeep(at(offset(node))));
      reportedDepth = true;
      continue;
    }
    if (node instanceof YAMLSeq) {
      for (const item of node) stack.push({ node: item, depth: depth + 1 });
      continue;
    }
    const seen = new Set<string>();
    for (const pair of node.pairs()) {
      const key = pair.key as Node | null;
      // A scalar can hold an object too (a !!binary key is a Uint8Array): yaml would stringify it
      // with a process warning.
      if (
        key !== null &&
        (!(key instanceof Scalar) || (typeof key.value === "object" && key.value !== null))
      ) {
        const message = "a mapping key must be a plain string, not a list, mapping, alias or binary";
        problems.push(problem(at(offset(key)), "complex-key", message));
      } else if (isMergeKey(key)) {
        problems.push(problem(at(offset(key)), "yaml-merge-key", MERGE_KEY_MESSAGE));
      } else {
        const name = String((key?.value as string | number | boolean | null | undefined) ?? "");
        if (seen.has(name))
          problems.push(
            problem(at(offset(key)), "duplicate-key", `key "${name}" appears twice in this mapping`),
          );
        seen.add(name);
      }
      stack.push({ node: pair.value, depth: depth + 1 });
    }
  }
  return problems;
}

/**
 * The parser's DUPLICATE_KEY error said our way, naming the key. The parser keeps the first key's
 * node only, so the repeated key is the mapping key whose text stands at the error's offset.
 */
export function duplicateKeyMessage(doc: Document, text: string, offset: number): string | undefined {
  let name: string | undefined;
  const stack: unknown[] = [doc.value];
  for (let steps = 0; stack.length > 0 && steps < 1_000_000; steps++) {
    const node = stack.pop();
    if (node instanceof YAMLSeq) stack.push(...node);
    if (!(node instanceof YAMLMap)) continue;
    for (const pair of node.pairs()) {
      const key = pair.key as Node | null;
      if (key instanceof Scalar) {
        const value = String(key.value);
        const at = /["']/.test(text[offset] ?? "") ? offset + 1 : offset;
        if (text.startsWith(value, at) && value.length > (name?.length ?? -1)) name = value;
      }
      stack.push(pair.value);
    }
  }
  return name === undefined ? undefined : `key "${name}" appears twice in this mapping`;
}

/**
 * Keys one mapping may hold. No manifest comes near; the parser (yaml 3.0.0-2) checks each new key
 * against every earlier one when it builds a mapping, so a hostile file of 50,000 keys in one
 * mapping took 6.5 s. Counted on the parser's first, linear stage (the CST), before any mapping
 * is built.
 */
export const MAX_MAPPING_KEYS = 2000;

export const tooManyKeys = (at: SourceLocation): Problem =>
  problem(
    at,
    "too-many-keys",
    `a mapping holds more than ${MAX_MAPPING_KEYS} keys; manifests hold far fewer`,
  );

/** The offset of the first mapping in `tokens` with more than MAX_MAPPING_KEYS entries; undefined if none. */
export function crowdedMappingAt(tokens: readonly CST.Token[]): number | undefined {
  const stack: Array<CST.Token | null | undefined> = [...tokens];
  while (stack.length > 0) {
    const token = stack.pop();
    if (!token) continue;
    if (token.type === "document") stack.push(token.value);
    else if (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection") {
      const mapping =
        token.type === "block-map" || (token.type === "flow-collection" && token.start.source === "{");
      if (mapping && token.items.length > MAX_MAPPING_KEYS) return token.offset;
      for (const item of token.items) stack.push(item.key, item.value);
    }
  }
  return undefined;
}

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
