import { MIN_VALUE_LENGTH } from "./redaction-limits.js";

// The forms a server may echo a value in: escaped as JSON, URL-encoded, HTML-escaped, in base64.

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
