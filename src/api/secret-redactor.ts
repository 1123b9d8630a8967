// Text a server sends back may echo what it was sent (a 400 whose detail quotes the request body).
// The redactor of a run knows every secret value of that run and removes each from such text, in
// the forms a server may echo it in, before plumb stores, logs, prints, serves or commits it.
// One per run, injected (src/reconcile/session.ts, src/controller/api-clients.ts): no global state.

import { decodedViews, lowerEach, spellings, withoutLineBreaks } from "./transport/escaped-text.js";

export const REDACTED = "[redacted]";
/** Shorter values are not searched for: they would match everywhere. */
const MIN_VALUE_LENGTH = 4;
/** A form cut short by a server (a truncated excerpt) is still found from this many characters. */
const MIN_PREFIX = 8;
/**
 * In a live value (redactWhole) a cut form counts from this many characters, or from MIN_PREFIX
 * where it ends the value (a field the server truncated): shorter, it is text a secret starts with.
 */
const MIN_LIVE_CUT = 16;

export type SecretRedactor = {
  /** Adds values to remove from now on (values already known, and short ones, are ignored). */
  add(values: Iterable<string | undefined>): void;
  /** The text with every known value, in every form, replaced by "[redacted]". */
  redact(text: string): string;
  /**
   * As redact, but a form found cut only from 16 characters, or where it ends the text: for a value
   * a server keeps (a live field), where text a secret starts with (`https://`) is no echo of it.
   */
  redactWhole(text: string): string;
};

const utf8 = new TextEncoder();

/** Base64 of `value` wherever it starts in a longer encoded text (byte offset mod 3), only the characters it alone determines. */
function base64Forms(value: string): string[] {
  const bytes = utf8.encode(value);
  const forms: string[] = [];
  for (const offset of [0, 1, 2]) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    let text = Buffer.from(padded).toString("base64").replace(/=+$/, "");
    // The first characters mix in the bytes before the value; the last one the bytes after it.
    if ((offset + bytes.length) % 3 !== 0) text = text.slice(0, -1);
    text = text.slice([0, 2, 3][offset]);
    forms.push(text, text.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return forms;
}

const json = (value: string) => JSON.stringify(value).slice(1, -1);
const asciiJson = (value: string) =>
  json(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
const html = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * The forms a server may echo `value` in: as sent, JSON-escaped (once, twice, ASCII-only), and each
 * of those URL-encoded, HTML-escaped or in base64 (a server quoting the JSON body it was sent).
 */
export function echoForms(value: string): string[] {
  const forms = new Set<string>();
  for (const text of new Set([value, json(value), asciiJson(value)])) {
    const url = encodeURIComponent(text);
    forms.add(text);
    forms.add(json(text));
    forms.add(url);
    forms.add(url.replace(/%20/g, "+"));
    forms.add(new URLSearchParams({ v: text }).toString().slice(2));
    forms.add(html(text));
    for (const encoded of base64Forms(text)) forms.add(encoded);
  }
  return [...forms].filter((form) => form.length >= MIN_VALUE_LENGTH);
}

/** A value's spellings (escaped-text.ts) long enough to search for. */
const spelled = (value: string): string[] =>
  spellings(value).filter((form) => form.length >= MIN_VALUE_LENGTH);

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

type Index = {
  /** Forms of 8+ characters by their first 8: found whole or cut to 8+ characters. */
  anchors: Map<string, string[]>;
  /** The same by their last 8: found cut at the start (an excerpt's "...tail", pydantic's `'head...tail'`). */
  tails: Map<string, string[]>;
  /** Shorter forms: found whole only. */
  short: string[];
};

function buildIndex(values: Iterable<string>, formsOf: (value: string) => string[]): Index {
  const anchors = new Map<string, string[]>();
  const tails = new Map<string, string[]>();
  const short: string[] = [];
  const file = (map: Map<string, string[]>, key: string, form: string) => {
    const list = map.get(key);
    if (list) list.push(form);
    else map.set(key, [form]);
  };
  for (const value of values) {
    for (const form of formsOf(value)) {
      if (form.length < MIN_PREFIX) {
        short.push(form);
        continue;
      }
      // A flat copy: a slice would keep the whole form alive through the map key.
      file(anchors, [...form.slice(0, MIN_PREFIX)].join(""), form);
      file(tails, [...form.slice(-MIN_PREFIX)].join(""), form);
    }
  }
  return { anchors, tails, short };
}

/** The forms of every value; its spellings as they are, and in lower case. */
type Indexes = { forms: Index; spellings: Index; lower: Index };

function buildIndexes(values: Set<string>): Indexes {
  return {
    forms: buildIndex(values, echoForms),
    spellings: buildIndex(values, spelled),
    lower: buildIndex(values, (value) => [...new Set(spelled(value).map(lowerEach))]),
  };
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
function redactWith(indexes: Indexes, text: string, whole = false): string {
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

/** A user name that is an account, not a token (`ssh://git@host`): kept. */
const PLAIN_USER = /^[a-z][a-z0-9._-]{0,31}$/;

/**
 * A live value's URLs without the credentials before their host (`https://robot:TOKEN@registry/`,
 * `https://ghp_…@github.com/`): not a secret the run knows, yet a credential plan would print and
 * drift --write or promote would write into git. A plain user name alone stays. Linear: each
 * `://` is read to the end of its authority once.
 */
function withoutUrlCredentials(text: string): string {
  let out = "";
  let from = 0;
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    let end = at + 3;
    while (end < text.length && !/[/?#\s]/.test(text[end]!)) end += 1;
    const userinfo = text.slice(at + 3, end).lastIndexOf("@");
    if (userinfo < 0) continue;
    const user = text.slice(at + 3, at + 3 + userinfo);
    if (PLAIN_USER.test(user)) continue;
    out += `${text.slice(from, at + 3)}${REDACTED}`;
    from = at + 3 + userinfo;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A run's redactor; its index of forms is rebuilt on the first redaction after values were added. */
export function createSecretRedactor(initial: Iterable<string | undefined> = []): SecretRedactor {
  const values = new Set<string>();
  let index: Indexes | null = null;
  const redactor: SecretRedactor = {
    add(more) {
      for (const value of more) {
        if (value === undefined || value.length < MIN_VALUE_LENGTH || values.has(value)) continue;
        values.add(value);
        index = null;
      }
    },
    redact(text) {
      if (values.size === 0 || text.length < MIN_VALUE_LENGTH) return text;
      index ??= buildIndexes(values);
      return redactWith(index, text);
    },
    redactWhole(text) {
      const shown = withoutUrlCredentials(text);
      if (values.size === 0 || shown.length < MIN_VALUE_LENGTH) return shown;
      index ??= buildIndexes(values);
      return redactWith(index, shown, true);
    },
  };
  redactor.add(initial);
  return redactor;
}

/** The tokens plumb may be given in its environment; each is a secret of the run. */
const TOKEN_VARIABLES = [
  "PLUMB_API_KEY",
  "PLUMB_GIT_TOKEN",
  "PLUMB_STATUS_TOKEN",
  "PLUMB_WEBHOOK_SECRET",
  "PLUMB_NOTIFY_SECRET",
] as const;

/** The values of TOKEN_VARIABLES set in `env`. */
export const tokensOf = (env: NodeJS.ProcessEnv): Array<string | undefined> =>
  TOKEN_VARIABLES.map((name) => env[name]?.trim());
