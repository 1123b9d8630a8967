import { corePlain } from "./cst-scalar.js";
import { MAX_NESTING } from "../yaml-shape.js";
import { bail, COLON, DASH, HASH, isKeyPart, keyEnd, put, skipSpaces, SPACE } from "./line-keys.js";

// The one-line values of the plain subset (line-compose.ts): quoted scalars without escapes, flow
// mappings and lists of the same, and where a plain scalar may start.

// Where a plain scalar may not start (`-` may, before a letter, digit or dot: `-1`, `-.inf`).
const NOT_PLAIN_START = new Set([..."?:,[]{}#&*!|>'\"%@`"].map((ch) => ch.charCodeAt(0)));
export function plainStart(text: string, p: number): void {
  const code = text.charCodeAt(p);
  if (NOT_PLAIN_START.has(code)) bail();
  if (code === DASH && !(isKeyPart(text.charCodeAt(p + 1)) && text.charCodeAt(p + 1) !== DASH)) bail();
}

/** A quoted scalar on one line, without escapes: its text and the offset past it. */
export function quoted(text: string, p: number, end: number): { value: string; end: number } {
  const quote = text[p]!;
  let close = text.indexOf(quote, p + 1);
  // '' is one ' inside single quotes.
  while (quote === "'" && close !== -1 && close < end && text[close + 1] === "'")
    close = text.indexOf(quote, close + 2);
  if (close === -1 || close >= end) bail();
  const inside = text.slice(p + 1, close);
  if (quote === '"' && inside.includes("\\")) bail();
  return { value: quote === "'" ? inside.replaceAll("''", "'") : inside, end: close + 1 };
}

/** A flow scalar or collection at `p`, inside a flow collection ending by `end`. */
function flowValue(text: string, p: number, end: number, depth: number): { value: unknown; end: number } {
  const code = text.charCodeAt(p);
  if (code === 123 || code === 91) return flow(text, p, end, depth);
  if (code === 34 || code === 39) return quoted(text, p, end);
  plainStart(text, p);
  let i = p;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 44 || c === 91 || c === 93 || c === 123 || c === 125) break;
    // A comment (` #`) would leave the collection open on the next line.
    if (c === COLON || (c === HASH && text.charCodeAt(i - 1) === SPACE)) bail();
  }
  let last = i;
  while (last > p && text.charCodeAt(last - 1) === SPACE) last--;
  if (last === p) bail();
  return { value: corePlain(text.slice(p, last)), end: i };
}

/** `{a: b, c: [d, e]}` or `[...]` on one line. */
export function flow(text: string, p: number, end: number, depth: number): { value: unknown; end: number } {
  if (depth > MAX_NESTING - 4) bail();
  const isMap = text.charCodeAt(p) === 123;
  const close = isMap ? 125 : 93;
  const value: Record<string, unknown> | unknown[] = isMap ? {} : [];
  p = skipSpaces(text, p + 1, end);
  if (text.charCodeAt(p) === close) return { value, end: p + 1 };
  for (let count = 1; ; count++) {
    if (isMap) {
      const k = keyEnd(text, p, end);
      if (k === -1 || k + 1 >= end) bail();
      const item = flowValue(text, skipSpaces(text, k + 2, end), end, depth + 1);
      put(value as Record<string, unknown>, text.slice(p, k), item.value, count);
      p = item.end;
    } else {
      const item = flowValue(text, p, end, depth + 1);
      (value as unknown[]).push(item.value);
      p = item.end;
    }
    p = skipSpaces(text, p, end);
    const code = text.charCodeAt(p);
    if (p < end && code === close) return { value, end: p + 1 };
    if (p >= end || code !== 44) bail();
    p = skipSpaces(text, p + 1, end);
    if (p >= end || text.charCodeAt(p) === close || text.charCodeAt(p) === 44) bail();
  }
}
