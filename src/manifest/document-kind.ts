import { distance } from "fastest-levenshtein";
import { API_VERSION, DOCUMENT_KINDS as KINDS } from "../schema/constants.js";
import type { DocumentLocators } from "./locate.js";
import type { Problem, Severity, SourceLocation } from "./types.js";

// Which YAML documents are plumb manifests. Exactly `apiVersion: plumb/v1` is one; anything that
// looks as if it meant to be one (a typo in the key or the value, a manifest inside a list, a
// plumb kind without apiVersion) is a problem rather than silently skipped. Other YAML (CI files,
// Kubernetes objects with their own apiVersion) is skipped quietly: it often lives alongside.

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const at = (where: SourceLocation, severity: Severity, code: string, field: string, message: string) => ({
  ...where,
  severity,
  code,
  field,
  message,
});

const SKIPPED = "this document is skipped";
const looksLikeApiVersionKey = (key: string) => key.toLowerCase().replace(/[-_ ]/g, "") === "apiversion";
const looksLikeManifest = (value: unknown) =>
  isRecord(value) && (Object.keys(value).some(looksLikeApiVersionKey) || KINDS.some((k) => k === value.kind));

/** "plumb" for a plumb/v1 document; a problem for a near miss; undefined for other YAML. */
export function classifyDocument(value: unknown, locators: DocumentLocators): "plumb" | Problem | undefined {
  if (Array.isArray(value)) {
    const index = value.findIndex(looksLikeManifest);
    if (index < 0) return undefined;
    const message =
      "a manifest inside a YAML list is not read; make each manifest its own document, separated by ---";
    return at(locators.value([index]), "error", "manifest-in-list", "", message);
  }
  if (!isRecord(value)) return undefined;
  const apiVersion = value.apiVersion;
  if (apiVersion === API_VERSION) return "plumb";
  if (typeof apiVersion === "string") {
    const where = locators.value(["apiVersion"]);
    if (apiVersion.startsWith("plumb/")) {
      const message = `apiVersion "${apiVersion}" is not supported; use "${API_VERSION}"`;
      return at(where, "error", "unsupported-api-version", "apiVersion", message);
    }
    const lower = apiVersion.toLowerCase();
    // Another tool's object (apps/v1, v1, ...) is none of ours: only near misses are reported.
    if (!lower.includes("plumb") && distance(lower, API_VERSION) > 3) return undefined;
    const message = `apiVersion "${apiVersion}" is not ${API_VERSION}; ${SKIPPED} (did you mean "${API_VERSION}"?)`;
    return at(where, "warning", "not-a-manifest", "apiVersion", message);
  }
  const misspelt = Object.keys(value).find((key) => key !== "apiVersion" && looksLikeApiVersionKey(key));
  if (misspelt !== undefined) {
    const message = `key "${misspelt}" is not "apiVersion"; ${SKIPPED} (did you mean "apiVersion"?)`;
    return at(locators.key([misspelt]), "warning", "not-a-manifest", misspelt, message);
  }
  if (KINDS.some((k) => k === value.kind)) {
    const message = `kind ${String(value.kind)} without apiVersion: ${API_VERSION}; ${SKIPPED}`;
    return at(locators.start, "warning", "not-a-manifest", "apiVersion", message);
  }
  return undefined;
}
