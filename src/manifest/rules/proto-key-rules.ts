import type { ParsedDocument } from "../parse/parse.js";
import { formatField } from "../schema-check.js";
import type { Problem } from "../types.js";

// A mapping key `__proto__`, anywhere in a document (a label, an annotation, an override): the
// control plane refuses a body holding one (422, docs/control-plane.md "Limits on what a client can
// send"), and in JavaScript an object's `__proto__` set by assignment is its prototype, not a key, so
// a merge or copy on the way could drop it or pollute the prototype. validate refuses it first, at
// its line, so plan and apply never send it. The schema does not: free-form maps take any key.

const KEY = "__proto__";
const MAX_REPORTED = 20;

/** Every `__proto__` key of the document, at the key's position. Parsing bounds the nesting. */
export function checkProtoKeys(doc: ParsedDocument): Problem[] {
  const problems: Problem[] = [];
  const path: Array<string | number> = [];
  const visit = (value: unknown) => {
    if (problems.length >= MAX_REPORTED) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        visit(value[i]);
        path.pop();
      }
    } else if (typeof value === "object" && value !== null) {
      for (const key of Object.keys(value)) {
        path.push(key);
        if (key === KEY && problems.length < MAX_REPORTED) {
          const field = formatField(path);
          problems.push({
            ...doc.locators.key([...path]),
            severity: "error",
            code: "proto-key",
            field,
            message: `${field}: the key ${KEY} is not allowed (the control plane refuses it, and JavaScript reads it as an object's prototype); rename or remove it`,
          });
        }
        visit((value as Record<string, unknown>)[key]);
        path.pop();
      }
    }
  };
  visit(doc.value);
  return problems;
}
