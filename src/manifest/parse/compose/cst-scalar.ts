import type { CST } from "yaml";

// Scalar values read straight from yaml's CST tokens, as yaml's composer and toJS read them (YAML
// 1.2 core schema, yaml 3.0.0-2's compose/resolve-*-scalar.ts and schema/core ported line for
// line), for cst-compose.ts. Wherever yaml would report an error or a warning, `unsure()` throws
// and the file goes to yaml's composer instead: this code never decides that a text is wrong.

/** Thrown where the fast path is not sure to read a text as yaml would (cst-compose.ts catches it). */
const UNSURE = new Error("not sure to read this text as yaml would");
export const unsure = (): never => {
  throw UNSURE;
};

/** A scalar's value and where its node ends (yaml's range[2]). */
export type Read = { value: unknown; end: number };

/** What a flow scalar holds by the core schema. */
type Plain = string | number | boolean | null;

/** yaml's resolveEnd with its errors as `unsure()`: the offset past a node's trailing tokens. */
export function endOf(
  tokens: readonly CST.SourceToken[] | undefined,
  offset: number,
  reqSpace: boolean,
): number {
  if (!tokens) return offset;
  let hasSpace = false;
  for (const token of tokens) {
    if (token.type === "space") hasSpace = true;
    else if (token.type === "comment") {
      if (reqSpace && !hasSpace) unsure();
    } else if (token.type === "newline") hasSpace = true;
    else unsure();
    offset += token.source.length;
  }
  return offset;
}

const BAD_PLAIN_START = new Set(["\t", ",", "%", "|", ">", "@", "`"]);
const MAY_START_OTHER = new Set([..."~nNtTfF+-."].map((c) => c.charCodeAt(0)));
const NULLS = new Set(["", "~", "null", "Null", "NULL"]);
const TRUES = new Set(["true", "True", "TRUE"]);
const FALSES = new Set(["false", "False", "FALSE"]);
const NAN_INF = new Set([
  ".nan",
  ".NaN",
  ".NAN",
  ".inf",
  ".Inf",
  ".INF",
  "+.inf",
  "+.Inf",
  "+.INF",
  "-.inf",
  "-.Inf",
  "-.INF",
]);
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const INT = /^[-+]?[0-9]+$/;
const OCT = /^0o[0-7]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;

/** A plain scalar's value by the core schema's tests, in its order (null, bool, int, float, string). */
export function corePlain(text: string): Plain {
  // Nulls start with ~ n N, booleans with t T f F, numbers with a digit, a sign or a dot: any
  // other first character makes a string (most values and keys: names, URLs, references).
  const first = text.charCodeAt(0);
  if (!(first >= 48 && first <= 57) && !MAY_START_OTHER.has(first) && text.length > 0) return text;
  if (NULLS.has(text)) return null;
  if (TRUES.has(text)) return true;
  if (FALSES.has(text)) return false;
  if (OCT.test(text)) return parseInt(text.substring(2), 8);
  if (INT.test(text)) return parseInt(text, 10);
  if (HEX.test(text)) return parseInt(text.substring(2), 16);
  if (NAN_INF.has(text)) {
    return text.slice(-3).toLowerCase() === "nan" ? NaN : text[0] === "-" ? -Infinity : Infinity;
  }
  if (FLOAT_EXP.test(text) || FLOAT.test(text)) return parseFloat(text);
  return text;
}

/** A flow scalar (plain, single or double quoted) as yaml's composer and toJS give it. */
export function flowScalar(token: CST.FlowScalar): Read & { value: Plain } {
  const { source } = token;
  let value: Plain = null;
  if (token.type === "scalar") {
    if (BAD_PLAIN_START.has(source[0] ?? "")) unsure();
    value = corePlain(foldLines(source));
  } else if (token.type === "single-quoted-scalar") {
    if (source.length === 1 || source[source.length - 1] !== "'") unsure();
    value = foldLines(source.slice(1, -1)).replace(/''/g, "'");
  } else if (token.type === "double-quoted-scalar") value = doubleQuoted(source);
  else unsure();
  return { value, end: endOf(token.end, token.offset + source.length, true) };
}

const isSpaceOrTab = (code: number) => code === 32 || code === 9;

/** yaml's foldLines: line breaks of a plain or single-quoted scalar folded to spaces. */
function foldLines(source: string): string {
  let newline = source.indexOf("\n");
  if (newline === -1) return source;
  const trimEnd = (from: number, to: number) => {
    if (source.charCodeAt(to - 1) === 13) to--;
    while (to > from && isSpaceOrTab(source.charCodeAt(to - 1))) to--;
    return to;
  };
  let result = source.slice(0, trimEnd(0, newline));
  let sep = " ";
  let pos = newline + 1;
  while ((newline = source.indexOf("\n", pos)) !== -1) {
    let start = pos;
    while (start < newline && isSpaceOrTab(source.charCodeAt(start))) start++;
    const end = trimEnd(start, newline);
    if (start === end) {
      if (sep === "\n") result += sep;
      else sep = "\n";
    } else {
      result += sep + source.slice(start, end);
      sep = " ";
    }
    pos = newline + 1;
  }
  let start = pos;
  while (start < source.length && isSpaceOrTab(source.charCodeAt(start))) start++;
  return result + sep + source.slice(start);
}

const ESCAPES = new Map(
  Object.entries({
    "0": "\0",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    f: "\f",
    n: "\n",
    r: "\r",
    t: "\t",
    v: "\v",
    N: "\u0085",
    _: "\xa0",
    L: "\u2028",
    P: "\u2029",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "\t": "\t",
  }),
);

/** yaml's doubleQuotedValue; an escape it would refuse, or a missing closing quote, is `unsure()`. */
function doubleQuoted(source: string): string {
  let result = "";
  for (let i = 1; i < source.length - 1; ++i) {
    const ch = source[i];
    if (ch === "\r" && source[i + 1] === "\n") continue;
    if (ch === "\n") {
      let fold = "";
      let next = source[i + 1];
      while (next === " " || next === "\t" || next === "\n" || next === "\r") {
        if (next === "\r" && source[i + 2] !== "\n") break;
        if (next === "\n") fold += "\n";
        i += 1;
        next = source[i + 1];
      }
      result += fold || " ";
    } else if (ch === "\\") {
      let next = source[++i];
      const escaped = next === undefined ? undefined : ESCAPES.get(next);
      if (escaped) result += escaped;
      else if (next === "\n" || (next === "\r" && source[i + 1] === "\n")) {
        if (next === "\r") i++;
        next = source[i + 1];
        while (next === " " || next === "\t") next = source[++i + 1];
      } else if (next === "x" || next === "u" || next === "U") {
        const length = next === "x" ? 2 : next === "u" ? 4 : 8;
        const hex = source.substr(i + 1, length);
        const code = hex.length === length && /^[0-9a-fA-F]+$/.test(hex) ? parseInt(hex, 16) : NaN;
        if (!(code <= 0x10ffff)) unsure();
        result += String.fromCodePoint(code);
        i += length;
      } else unsure();
    } else if (ch === " " || ch === "\t") {
      const wsStart = i;
      let next = source[i + 1];
      while (next === " " || next === "\t") next = source[++i + 1];
      if (next !== "\n" && !(next === "\r" && source[i + 2] === "\n"))
        result += i > wsStart ? source.slice(wsStart, i + 1) : ch;
    } else result += ch;
  }
  if (source.length === 1 || source[source.length - 1] !== '"') unsure();
  return result;
}
