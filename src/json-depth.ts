// How deep a JSON text nests, read on the raw text before it is parsed: one linear pass counting
// brackets outside strings. JSON.parse reads any depth, but JSON.stringify, structuredClone and every
// recursive walk after it throw "Maximum call stack size exceeded" at some thousands of levels. The
// control plane refuses request bodies past 64 levels (422); plumb's clients refuse answers past 128.

/** True when `text` nests objects/arrays deeper than `max` levels. */
export function jsonDepthExceeds(text: string, max: number): boolean {
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
