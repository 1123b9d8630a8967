import { LineCounter, parseAllDocuments } from "yaml";
import { API_VERSION } from "../schema/manifest.js";
import { buildLocators, type DocumentLocators } from "./locate.js";
import type { Problem, Severity, SourceLocation } from "./types.js";

/** Files over this size are refused unread: manifests are small, and YAML parsing is not free. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Aliases a document may expand; far above what a manifest needs, far below a "billion laughs". */
export const MAX_ALIAS_COUNT = 100;

/** One plumb document (apiVersion plumb/v1) as parsed, before validation. */
export type ParsedDocument = {
  file: string;
  /** Position of the document in its file, from 0. */
  index: number;
  value: Record<string, unknown>;
  locators: DocumentLocators;
};

export type ParseResult = { documents: ParsedDocument[]; problems: Problem[] };

export const problemAt = (
  location: SourceLocation,
  severity: Severity,
  code: string,
  field: string,
  message: string,
): Problem => ({ ...location, severity, code, field, message });

const fileStart = (file: string): SourceLocation => ({ file, line: 1, column: 1 });

/** Decodes file bytes as strict UTF-8 (a BOM is dropped); invalid bytes become a problem. */
export function decodeManifestBytes(
  bytes: Uint8Array,
  file: string,
): { text: string } | { problem: Problem } {
  if (bytes.byteLength > MAX_MANIFEST_BYTES) {
    return { problem: tooLarge(file, bytes.byteLength) };
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return {
      problem: problemAt(fileStart(file), "error", "invalid-encoding", "", "file is not valid UTF-8 text"),
    };
  }
}

export const tooLarge = (file: string, size: number): Problem =>
  problemAt(
    fileStart(file),
    "error",
    "file-too-large",
    "",
    `file is ${size} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit for manifests`,
  );

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Parses every YAML document of one file. Only plumb documents are returned; others are skipped.
 * Syntax errors, duplicate keys, alias bombs and empty files become problems, never exceptions.
 */
export function parseManifestText(text: string, file: string): ParseResult {
  const problems: Problem[] = [];
  if (text.trim() === "") {
    problems.push(problemAt(fileStart(file), "warning", "empty-file", "", "file is empty"));
    return { documents: [], problems };
  }
  const lineCounter = new LineCounter();
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  } catch (error) {
    problems.push(
      problemAt(fileStart(file), "error", "yaml-syntax", "", `cannot parse YAML: ${reason(error)}`),
    );
    return { documents: [], problems };
  }
  const documents: ParsedDocument[] = [];
  docs.forEach((doc, index) => {
    for (const error of doc.errors) {
      const code = error.code === "DUPLICATE_KEY" ? "duplicate-key" : "yaml-syntax";
      problems.push(problemAt(at(error.pos[0]), "error", code, "", firstLine(error.message)));
    }
    for (const warning of doc.warnings) {
      problems.push(problemAt(at(warning.pos[0]), "warning", "yaml-warning", "", firstLine(warning.message)));
    }
    if (doc.errors.length > 0) return;
    const locators = buildLocators(doc, lineCounter, file);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const message = `document expands too many aliases (limit ${MAX_ALIAS_COUNT}): ${reason(error)}`;
      problems.push(problemAt(locators.start, "error", "yaml-alias-limit", "", message));
      return;
    }
    if (!isRecord(value) || typeof value.apiVersion !== "string") return;
    if (value.apiVersion === API_VERSION) {
      documents.push({ file, index, value, locators });
    } else if (value.apiVersion.startsWith("plumb/")) {
      const message = `apiVersion "${value.apiVersion}" is not supported; use "${API_VERSION}"`;
      problems.push(
        problemAt(locators.value(["apiVersion"]), "error", "unsupported-api-version", "apiVersion", message),
      );
    }
  });
  return { documents, problems };
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const firstLine = (message: string): string => message.split("\n")[0]?.trim() ?? message;
