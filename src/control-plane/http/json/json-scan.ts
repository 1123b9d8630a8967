import { jsonDepthExceeds as depthExceeds } from "../../../json-depth.js";

// A nesting limit checked on the raw JSON text, before it is parsed or stored: one linear pass
// counting brackets outside strings. A body nested deeper than a store, a snapshot or an answer can
// serialise (JSON.stringify recurses) is refused with 422 instead of breaking later writes.

export const MAX_JSON_DEPTH = 64;

/** True when `text` nests objects/arrays deeper than `max` levels (src/json-depth.ts). */
export const jsonDepthExceeds = (text: string, max = MAX_JSON_DEPTH): boolean => depthExceeds(text, max);

// A JSON object that names a key twice (`{"secrets": [...], "secrets": null}`) means what its
// parser says: JSON.parse and Python keep the last, other parsers the first or refuse it, so a
// proxy or audit log in front can read another request than the server acts on. RFC 8259 says the
// names "SHOULD be unique"; this server refuses a body that repeats one (422). One linear pass over
// text JSON.parse has already accepted, with a set of names per open object.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The first key some object of `text` (valid JSON) repeats, decoded; undefined when none does. */
export function repeatedKeyOf(text: string): string | undefined {
  const open: Array<Set<string> | null> = []; // a set per open object, null per open array
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true;
          i++;
        }
      }
      const keys = open.at(-1);
      if (!expectKey || !keys) continue;
      const raw = text.slice(start, i + 1);
      const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      if (keys.has(key)) return key;
      keys.add(key);
      expectKey = false;
    } else if (c === 0x7b) {
      open.push(new Set());
      expectKey = true;
    } else if (c === 0x5b) {
      open.push(null);
      expectKey = false;
    } else if (c === 0x7d || c === 0x5d) {
      open.pop();
    } else if (c === 0x2c) {
      expectKey = open.at(-1) != null;
    }
  }
  return undefined;
}
