import { parseManifestText } from "../../src/manifest/parse.js";
import type { Problem } from "../../src/manifest/types.js";
import { validateDocuments } from "../../src/manifest/validate.js";

/** Parses and validates one file's text, as `plumb validate` would. */
export function check(text: string, file = "m.yaml") {
  const parsed = parseManifestText(text, file);
  return validateDocuments(parsed.documents, parsed.problems);
}

/** Problems as compact `LINE:COL severity code` strings, easy to compare exactly. */
export const brief = (problems: readonly Problem[]) =>
  problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.code}`);

/** Several files validated together (for rules across files). */
export function checkFiles(files: Record<string, string>) {
  const documents = [];
  const problems = [];
  for (const [file, text] of Object.entries(files)) {
    const parsed = parseManifestText(text, file);
    documents.push(...parsed.documents);
    problems.push(...parsed.problems);
  }
  return validateDocuments(documents, problems);
}

export const yaml = (strings: TemplateStringsArray, ...values: unknown[]) =>
  String.raw({ raw: strings }, ...values).replace(/^\n/, "");
