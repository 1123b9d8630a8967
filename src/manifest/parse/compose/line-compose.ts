import type { ComposedDocument } from "./cst-compose.js";
import { corePlain } from "./cst-scalar.js";
import { MAX_NESTING } from "../yaml-shape.js";
import { bail, DASH, HASH, keyEnd, put, skipSpaces, SPACE } from "./line-keys.js";
import { flow, plainStart, quoted } from "./line-flow.js";

// The values of the plainest manifests read straight from their text, before yaml's lexer and
// parser run (docs/manifests.md "Speed": they were ~40% of a load's CPU). Like cst-compose.ts it
// never finds an error: it takes one narrow subset of YAML and gives up (`bail()`) on anything
// else, and the text goes the usual way (yaml's parser, then cst-compose.ts or yaml's composer).
// The subset: one document of printable ASCII (no tab, CR, BOM), a block mapping at column 0,
// after at most one `---` line; block mappings and lists (`- ` items, compact `- key: value`
// mappings, a list at its key's indent); keys of letters, digits and `_ . / -` (a letter or `_`
// first) followed by `: ` or a line end; one-line values: plain scalars (YAML 1.2 core schema,
// cst-scalar.ts), quoted scalars without escapes, and flow mappings and lists of the same;
// comment lines, and comments after a value (` #`) but not inside a flow collection. A plain
// scalar holding `: ` or ending in `:`, a line indented deeper than its place allows (a
// continuation, a bad indent), a key seen twice, `__proto__`, a null or boolean spelled as a key,
// more than MAX_MAPPING_KEYS keys, nesting near MAX_NESTING, an indicator (`? : ! & * | > % @ \``)
// where a value starts: all `bail()`.
// test/manifest/line-compose.test.ts holds it to yaml's values and starts, as cst-compose.test.ts.

/** Where the reading is: the current non-blank line (`indent` -1 past the last one). */
type Cursor = { text: string; line: number; at: number; end: number; indent: number; hashes: boolean };

/** Where a value starts at `p` (after a space): `end` when nothing but a comment is left. */
const valueAt = (text: string, p: number, end: number) => (text.charCodeAt(p) === HASH ? end : p);

/** Moves to the first non-blank line starting at `from` (a line's start). */
function nextLine(c: Cursor, from: number): void {
  const { text } = c;
  for (let start = from; start < text.length;) {
    let at = start;
    while (text.charCodeAt(at) === SPACE) at++;
    let end = text.indexOf("\n", at);
    if (end === -1) end = text.length;
    // A blank line, or a comment line (at any indent), holds nothing.
    if (at < end && text.charCodeAt(at) !== HASH) {
      c.line = start;
      c.at = at;
      c.end = end;
      c.indent = at - start;
      return;
    }
    start = end + 1;
  }
  c.at = c.end = text.length;
  c.indent = -1;
}

const atEnd = (c: Cursor) => c.indent === -1;

const isSeqLine = (c: Cursor) =>
  c.text.charCodeAt(c.at) === DASH && (c.at + 1 === c.end || c.text.charCodeAt(c.at + 1) === SPACE);

/** A value on the rest of the current line, from `p`; moves to the next line. */
function inline(c: Cursor, p: number, depth: number): unknown {
  const { text, end } = c;
  const code = text.charCodeAt(p);
  let value: unknown;
  let after: number;
  if (code === 123 || code === 91 || code === 34 || code === 39) {
    const read = code === 34 || code === 39 ? quoted(text, p, end) : flow(text, p, end, depth);
    value = read.value;
    after = read.end;
  } else {
    plainStart(text, p);
    let last = end;
    // A plain scalar ends where a comment (` #`) starts (looked for on this line only).
    for (let i = p + 1; c.hashes && i < end; i++)
      if (text.charCodeAt(i) === HASH && text.charCodeAt(i - 1) === SPACE) {
        last = i;
        break;
      }
    while (text.charCodeAt(last - 1) === SPACE) last--;
    const plain = text.slice(p, last);
    if (plain.includes(": ") || plain.endsWith(":")) bail();
    value = corePlain(plain);
    after = last;
  }
  const rest = skipSpaces(text, after, end);
  if (rest !== end && !(rest > after && text.charCodeAt(rest) === HASH)) bail();
  nextLine(c, end + 1);
  return value;
}

/** A block mapping or list whose first line is the current one. */
function block(c: Cursor, depth: number): unknown {
  if (depth > MAX_NESTING - 4) bail();
  return isSeqLine(c) ? sequence(c, c.indent, depth) : mapping(c, c.indent, depth);
}

function mapping(c: Cursor, indent: number, depth: number): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (let count = 1; c.indent === indent && !isSeqLine(c); count++) {
    const { text } = c;
    const k = keyEnd(text, c.at, c.end);
    if (k === -1) bail();
    const name = text.slice(c.at, k);
    const p = valueAt(text, skipSpaces(text, k + 1, c.end), c.end);
    let value: unknown = null;
    if (p < c.end) value = inline(c, p, depth + 1);
    else {
      nextLine(c, c.end + 1);
      if (c.indent > indent) value = block(c, depth + 1);
      else if (c.indent === indent && isSeqLine(c)) value = sequence(c, indent, depth + 1);
    }
    put(map, name, value, count);
    if (c.indent > indent) bail();
  }
  return map;
}

function sequence(c: Cursor, indent: number, depth: number): unknown[] {
  const list: unknown[] = [];
  while (c.indent === indent && isSeqLine(c)) {
    const { text } = c;
    const p = valueAt(text, skipSpaces(text, c.at + 1, c.end), c.end);
    if (p === c.end) {
      nextLine(c, c.end + 1);
      list.push(c.indent > indent ? block(c, depth + 1) : null);
    } else if (keyEnd(text, p, c.end) !== -1) {
      // `- key: value`: a mapping whose keys are in the column of this one.
      c.at = p;
      c.indent = p - c.line;
      list.push(mapping(c, c.indent, depth + 1));
    } else list.push(inline(c, p, depth + 1));
    if (c.indent > indent) bail();
  }
  return list;
}

/** Printable ASCII and line feeds. */
function plainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 126 || (code < SPACE && code !== 10)) return false;
  }
  return true;
}

/**
 * The one document of `text` as yaml's composer and toJS would give it, when the text is of the
 * subset above; undefined otherwise. Its start is its `kind` key's offset, else its first key's.
 */
export function composePlainText(text: string): ComposedDocument[] | undefined {
  if (!plainText(text)) return undefined;
  const c: Cursor = { text, line: 0, at: 0, end: 0, indent: -1, hashes: text.includes("#") };
  try {
    nextLine(c, 0);
    // One `---` line (with blanks or a comment after it) may start the document.
    if (text.startsWith("---", c.at) && c.indent === 0) {
      const after = skipSpaces(text, c.at + 3, c.end);
      if (after !== c.end && !(after > c.at + 3 && text.charCodeAt(after) === HASH)) return undefined;
      nextLine(c, c.end + 1);
    }
    if (c.indent !== 0 || isSeqLine(c)) return undefined;
    const first = c.at;
    const value = mapping(c, 0, 1);
    // Every line read: nothing left over (a second root, a line indented past its place).
    if (!atEnd(c)) return undefined;
    const kind = Object.hasOwn(value, "kind") ? kindOffset(text) : -1;
    return [{ value, start: kind === -1 ? first : kind }];
  } catch {
    // BAIL, or anything this code did not foresee: the usual way decides.
    return undefined;
  }
}

/** The offset of the root mapping's `kind:` key (a line starting with it). */
function kindOffset(text: string): number {
  if (text.startsWith("kind:")) return 0;
  const at = text.indexOf("\nkind:");
  return at === -1 ? -1 : at + 1;
}
