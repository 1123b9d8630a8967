import { corePlain } from "./cst-scalar.js";
import { MAX_MAPPING_KEYS } from "../yaml-shape.js";

// The pieces every reader of the plain subset (line-compose.ts) shares: `bail()`, the characters
// it looks for, and keys: where one ends, and adding a pair to a mapping.

const BAIL = new Error("not a text of the plain subset");
export const bail = (): never => {
  throw BAIL;
};

export const SPACE = 32;
export const DASH = 45;
export const COLON = 58;
export const HASH = 35;

// Letters and `_` first; then letters, digits, `_ . / -`.
const isKeyStart = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
export const isKeyPart = (code: number) =>
  isKeyStart(code) || (code >= 47 && code <= 57) || code === 46 || code === DASH;

/** The end of a key at `p` followed by `:` and a space or `end`; -1 if there is none. */
export function keyEnd(text: string, p: number, end: number): number {
  if (!isKeyStart(text.charCodeAt(p))) return -1;
  let i = p + 1;
  while (i < end && isKeyPart(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== COLON || (i + 1 < end && text.charCodeAt(i + 1) !== SPACE)) return -1;
  return i - p > 1000 ? -1 : i;
}

/** Adds a pair; a key seen before, `__proto__`, a key that is not a string by the core schema: bail. */
export function put(map: Record<string, unknown>, name: string, value: unknown, count: number): void {
  // A key starts with a letter or `_`: only n N t T f F can start a null or a boolean.
  const first = name.charCodeAt(0) | 32;
  const word = first === 110 || first === 116 || first === 102;
  if (
    count > MAX_MAPPING_KEYS ||
    name === "__proto__" ||
    Object.hasOwn(map, name) ||
    (word && corePlain(name) !== name)
  )
    bail();
  map[name] = value;
}

export const skipSpaces = (text: string, p: number, end: number) => {
  while (p < end && text.charCodeAt(p) === SPACE) p++;
  return p;
};
