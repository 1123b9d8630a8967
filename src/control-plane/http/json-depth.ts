// A nesting limit checked on the raw JSON text, before it is parsed or stored: one linear pass
// counting brackets outside strings. A body nested deeper than a store, a snapshot or an answer can
// serialise (JSON.stringify recurses) is refused with 422 instead of breaking later writes.

export const MAX_JSON_DEPTH = 64;

/** True when `text` nests objects/arrays deeper than `max` levels. */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
