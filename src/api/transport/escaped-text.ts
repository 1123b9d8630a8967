// A server may echo a secret it was sent escaped in its own way: JSON with every character as
// `\uXXXX` (Go writes `<` as `\u003c`), `\/` (PHP), HTML entities (`&#39;`), percent-escapes in lower
// case. The redactor (../secret-redactor.ts) also searches the text as these escapes decode it, and
// maps what it finds back to the characters of the text as received.

/**
 * The ways a server may spell a value before any escape (decodedViews undoes those): trimmed, in
 * Unicode's composed or decomposed form (NFC, NFD), its line ends as CRLF.
 */
export function spellings(value: string): string[] {
  const out = new Set<string>();
  for (const text of [value, value.trim()])
    for (const form of [text, text.normalize("NFC"), text.normalize("NFD")])
      out.add(form).add(form.replace(/\r?\n/g, "\r\n"));
  return [...out];
}

/** Each UTF-16 unit in lower case where that keeps it one unit: positions stay those of `text`. */
export const lowerEach = (text: string): string =>
  text.replace(/[^\0-\x40\x5b-\x7f]/g, (c) => {
    const lower = c.toLowerCase();
    return lower.length === 1 ? lower : c;
  });

/** A text with escapes decoded; `starts[i]`/`ends[i]`: where its character i came from in the original. */
export type View = { text: string; starts: number[]; ends: number[] };

/**
 * A server's escapes, any spelling: JSON's `\uXXXX` (any case, any character, as Go writes `<`,
 * `>`, `&`), `\/` (PHP), `\'`, `\"`, `\\`, `\n`...; HTML's `&#39;`, `&#x27;` and named entities;
 * URL percent-escapes in any case.
 */
const ESCAPE =
  /\\u([0-9a-fA-F]{4})|\\([/'"\\])|\\([nrtbf])|&#(\d{1,7});|&#[xX]([0-9a-fA-F]{1,6});|&(amp|lt|gt|quot|apos);|(?:%[0-9a-fA-F]{2})+/g;
const CONTROL: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };
const ENTITY: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEscape(match: RegExpExecArray): string {
  const [whole, hex4, char, control, dec, hex, entity] = match;
  const code = (digits: string, radix: number) => {
    const n = Number.parseInt(digits, radix);
    return n <= 0x10ffff ? String.fromCodePoint(n) : whole;
  };
  if (hex4 !== undefined) return String.fromCharCode(Number.parseInt(hex4, 16));
  if (char !== undefined) return char;
  if (control !== undefined) return CONTROL[control] ?? whole;
  if (dec !== undefined) return code(dec, 10);
  if (hex !== undefined) return code(hex, 16);
  if (entity !== undefined) return ENTITY[entity] ?? whole;
  return Buffer.from(whole.replace(/%/g, ""), "hex").toString("utf8");
}

/** `view` with one layer of escapes decoded, or null when it holds none. */
function decodeOnce(view: View): View | null {
  const next: View = { text: "", starts: [], ends: [] };
  let at = 0;
  const keep = (from: number, to: number) => {
    next.text += view.text.slice(from, to);
    // A loop, not push(...slice): spreading 500,000 positions overflows the call's arguments.
    for (let i = from; i < to; i += 1) {
      next.starts.push(view.starts[i] ?? 0);
      next.ends.push(view.ends[i] ?? 0);
    }
  };
  for (const match of view.text.matchAll(ESCAPE)) {
    const start = match.index;
    const end = start + match[0].length;
    keep(at, start);
    const decoded = decodeEscape(match);
    next.text += decoded;
    for (let i = 0; i < decoded.length; i += 1) {
      next.starts.push(view.starts[start] ?? 0);
      next.ends.push(view.ends[end - 1] ?? 0);
    }
    at = end;
  }
  if (at === 0) return null;
  keep(at, view.text.length);
  return next;
}

/** `text` as it is, then with up to 3 layers of escapes decoded (JSON in a URL in HTML). */
export function decodedViews(text: string): View[] {
  const starts = Array.from({ length: text.length }, (_, i) => i);
  const views: View[] = [{ text, starts, ends: starts.map((i) => i + 1) }];
  for (let layer = 0; layer < 3; layer += 1) {
    const next = decodeOnce(views[views.length - 1] as View);
    if (next === null) break;
    views.push(next);
  }
  return views;
}

/**
 * `text` without its line breaks, or null when it has none: base64 as MIME writes it (Python's
 * base64.encodebytes, Java's MIME encoder) breaks a line every 76 characters, cutting an encoded
 * secret in two, and the part after the break was shown.
 */
export function withoutLineBreaks(text: string): View | null {
  if (!/[\r\n]/.test(text)) return null;
  const view: View = { text: "", starts: [], ends: [] };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    if (c === "\r" || c === "\n") continue;
    view.text += c;
    view.starts.push(i);
    view.ends.push(i + 1);
  }
  return view;
}
