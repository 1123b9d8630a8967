import type { ParsedDocument } from "../parse/parse.js";
import { formatField } from "../schema-check.js";
import type { Problem } from "../types.js";

// Characters no manifest needs, which hide text from reviewers or break what reads it later:
// NUL and the other C0/C1 control characters anywhere (tab, newline and carriage return stay
// allowed in values such as scripts and certificates), and in names and labels also tab, newline
// and the bidirectional overrides of "Trojan Source".

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- as above, plus tab, newline and bidi overrides
const STRICT = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const MAX_REPORTED = 20;

const codePoint = (text: string, pattern: RegExp) => {
  const found = pattern.exec(text)?.[0] ?? "";
  return `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
};

/**
 * Every key and string value of the document. Recursive with one shared path: parsing already
 * refused documents nested deeper than MAX_NESTING, and this runs on every document.
 */
export function checkTextCharacters(doc: ParsedDocument): Problem[] {
  const problems: Problem[] = [];
  const path: Array<string | number> = [];
  const report = (text: string, part: "key" | "value", pattern: RegExp) => {
    const field = formatField(path);
    const what = part === "key" ? `the key of ${field}` : field;
    const message = `${what} contains the control character ${codePoint(text, pattern)}; remove it`;
    problems.push({
      ...doc.locators[part]([...path]),
      severity: "error",
      code: "control-character",
      field,
      message,
    });
  };
  const visit = (value: unknown) => {
    if (problems.length >= MAX_REPORTED) return;
    const pattern = path[0] === "metadata" && (path[1] === "name" || path[1] === "labels") ? STRICT : CONTROL;
    if (typeof value === "string") {
      if (pattern.test(value)) report(value, "value", pattern);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        visit(value[i]);
        path.pop();
      }
    } else if (typeof value === "object" && value !== null) {
      for (const key in value) {
        path.push(key);
        const keyPattern =
          path[0] === "metadata" && (path[1] === "name" || path[1] === "labels") ? STRICT : CONTROL;
        if (keyPattern.test(key)) report(key, "key", keyPattern);
        visit((value as Record<string, unknown>)[key]);
        path.pop();
      }
    }
  };
  visit(doc.value);
  return problems;
}
