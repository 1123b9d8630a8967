import { decodedViews, lowerEach, withoutLineBreaks } from "../transport/escaped-text.js";
import type { Index, Indexes } from "./form-index.js";
import { MIN_LIVE_CUT, MIN_PREFIX, REDACTED } from "./redaction-limits.js";

// One redaction: where the indexed forms occur in a text, whole or cut, and the text without them.

/** How many characters of `form` appear at `text[at]`. */
function matchLength(text: string, at: number, form: string): number {
  let n = 0;
  while (n < form.length && at + n < text.length && text.charCodeAt(at + n) === form.charCodeAt(n)) n += 1;
  return n;
}

/** How many characters of `form` end at `text[end - 1]` (a form cut at its start). */
function tailLength(text: string, end: number, form: string): number {
  let n = 0;
  while (
    n < form.length &&
    end - n > 0 &&
    text.charCodeAt(end - n - 1) === form.charCodeAt(form.length - n - 1)
  )
    n += 1;
  return n;
}

/** `text` with each [start, end) range (overlapping or not) replaced by REDACTED. */
function cut(text: string, ranges: Array<[number, number]>): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [start, end] of ranges) {
    if (end <= at) continue;
    if (start >= at) out += text.slice(at, start) + REDACTED;
    at = end;
  }
  return out + text.slice(at);
}

/** The [start, end) ranges of `text` that hold a form of a value (whole, or unless `whole` cut to 8+). */
function rangesOf(index: Index, text: string, whole: boolean): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i + MIN_PREFIX <= text.length; i += 1) {
    const forms = index.anchors.get(text.slice(i, i + MIN_PREFIX));
    if (!forms) continue;
    const found = forms
      .map((form) => ({ form, length: matchLength(text, i, form) }))
      .filter(
        ({ form, length }) =>
          !whole || length === form.length || length >= MIN_LIVE_CUT || i + length === text.length,
      );
    if (found.length > 0) ranges.push([i, i + Math.max(...found.map(({ length }) => length))]);
  }
  // Cut at its start: its last 8+ characters (a live value's from 16, or where they start it).
  for (let end = MIN_PREFIX; end <= text.length; end += 1) {
    const forms = index.tails.get(text.slice(end - MIN_PREFIX, end));
    for (const form of forms ?? []) {
      const n = tailLength(text, end, form);
      if (!whole || n === form.length || n >= MIN_LIVE_CUT || n === end) ranges.push([end - n, end]);
    }
  }
  for (const form of index.short) {
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1))
      ranges.push([at, at + form.length]);
  }
  return ranges;
}

/**
 * Pure: `text` with every form of every value (see echoForms), whole or (unless `whole`) cut to
 * 8+ characters, redacted; and each spelling of a value (see spellings) in the text as a server's
 * escapes decode it (see decodedViews), in any case unless `whole`.
 */
export function redactWith(indexes: Indexes, text: string, whole = false): string {
  const ranges = rangesOf(indexes.forms, text, whole);
  const joined = whole ? null : withoutLineBreaks(text);
  for (const [start, end] of joined ? rangesOf(indexes.forms, joined.text, false) : [])
    ranges.push([joined?.starts[start] ?? 0, joined?.ends[end - 1] ?? text.length]);
  for (const view of decodedViews(text)) {
    const lower = whole ? view.text : lowerEach(view.text);
    for (const [start, end] of rangesOf(whole ? indexes.spellings : indexes.lower, lower, whole))
      ranges.push([view.starts[start] ?? 0, view.ends[end - 1] ?? text.length]);
  }
  return cut(text, ranges);
}
