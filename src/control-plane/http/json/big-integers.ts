import type { ValidationIssue } from "../validation-errors.js";

// JSON.parse reads every number as an IEEE double: an integer beyond 2^53 - 1 comes out changed
// (9007199254740993 → 9007199254740992, 12345678901234567890 → 12345678901234567000) and was stored
// and answered so. A pydantic service reads it exactly (Python's int); this server cannot, so it
// refuses it, 422 naming each field, with the bound its integer query parameters already answer
// (`?offset=9007199254740993`: "less than or equal to 9007199254740991"). Only integer literals:
// `1e20` and `9007199254740993.0` are floats, which Python reads as doubles too.
// docs/control-plane.md "Integers beyond 2^53" (Deployments).

const LIMIT = Number.MAX_SAFE_INTEGER;
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** What a too-large integer is replaced with to find where it sits (a string no client sends). */
const MARK = "\u0001plumb:unsafe-integer\u0001";

/** The integer literals of `text` (valid JSON), outside strings, beyond ±(2^53 - 1): [start, end]. */
function unsafeIntegers(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match === null) continue;
    if (match[1] === undefined && match[2] === undefined && Math.abs(Number(match[0])) > LIMIT)
      found.push([i, i + match[0].length]);
    i += match[0].length - 1;
  }
  return found;
}

type Mark = { loc: Array<string | number>; negative: boolean };

/** Where the marks sit in a parsed value (walked in its own order, not the text's). */
function marksIn(value: unknown, path: Array<string | number>, out: Mark[]): void {
  if (typeof value === "string") {
    if (value.startsWith(MARK)) out.push({ loc: path, negative: value.endsWith("-") });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  for (const [key, item] of entries) marksIn(item, [...path, key], out);
}

/**
 * True when the parsed value holds a number beyond ±(2^53 - 1), as every such integer parses to:
 * only such bodies pay for the scan of their text (a walk of 1 MiB of numbers: ~3 ms, a regex for
 * 16 digits in a row on its text ~28 ms).
 */
function mayHoldUnsafe(value: unknown): boolean {
  if (typeof value === "number") return value > LIMIT || value < -LIMIT;
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(mayHoldUnsafe);
  for (const key in value) if (mayHoldUnsafe((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** One issue per integer of the body (`text`, parsed as `value`) that a double cannot hold exactly. */
export function unsafeIntegerIssues(text: string, value: unknown = JSON.parse(text)): ValidationIssue[] {
  if (!mayHoldUnsafe(value)) return [];
  const tokens = unsafeIntegers(text);
  if (tokens.length === 0) return [];
  let marked = text;
  for (const [start, end] of [...tokens].reverse()) {
    const sign = text.charCodeAt(start) === 0x2d ? "-" : "+";
    marked = `${marked.slice(0, start)}${JSON.stringify(`${MARK}${sign}`)}${marked.slice(end)}`;
  }
  const marks: Mark[] = [];
  marksIn(JSON.parse(marked), ["body"], marks);
  return marks.map(({ loc, negative }) =>
    negative
      ? { loc, msg: `Input should be greater than or equal to ${-LIMIT}`, type: "greater_than_equal" }
      : { loc, msg: `Input should be less than or equal to ${LIMIT}`, type: "less_than_equal" },
  );
}
