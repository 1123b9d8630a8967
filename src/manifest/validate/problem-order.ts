import type { ParsedDocument } from "../parse/parse.js";
import type { Problem } from "../types.js";

// Reading order, of documents and of problems.

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Reading order: by file, then by position in the file. */
export const sortDocuments = (documents: readonly ParsedDocument[]) =>
  documents.length < 2
    ? documents
    : [...documents].sort((a, b) => compareText(a.file, b.file) || a.index - b.index);

/** Problems in reading order: file, line, column, then errors before warnings. */
export const sortProblems = (problems: readonly Problem[]): Problem[] =>
  [...problems].sort(
    (a, b) =>
      compareText(a.file, b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      compareText(a.severity, b.severity) ||
      compareText(a.code, b.code),
  );
