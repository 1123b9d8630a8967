import { CORE_SCHEMA, loadAll } from "js-yaml";
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
  if (text.trim() === "") {
    return {
      documents: [],
      problems: [problemAt(fileStart(file), "warning", "empty-file", "", "file is empty")],
    };
  }
  return parseFast(text, file) ?? parseWithPositions(text, file);
}

// Anchors and aliases are rare in manifests; any hint of them takes the guarded path (alias limit).
const MAY_HAVE_ALIASES = /(^|[\s[{,])[&*]/m;

/**
 * The common case, about five times faster: js-yaml (YAML 1.2 core schema) reads the values and
 * source positions are computed only when something asks for one. Anything unusual (an error,
 * a duplicate key, a tag, an alias) returns undefined, and the positional parser takes over.
 */
function parseFast(text: string, file: string): ParseResult | undefined {
  if (MAY_HAVE_ALIASES.test(text)) return undefined;
  const values: unknown[] = [];
  try {
    loadAll(text, (doc) => values.push(doc), { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  let positions: ParsedDocument[] | undefined;
  const locatorsOf = (index: number) => () => {
    positions ??= parseWithPositions(text, file, true).documents;
    return positions.find((d) => d.index === index)?.locators ?? fallbackLocators(file);
  };
  const documents: ParsedDocument[] = [];
  const problems: Problem[] = [];
  values.forEach((value, index) => {
    const locators = lazyLocators(locatorsOf(index));
    if (!isRecord(value) || typeof value.apiVersion !== "string") return;
    if (value.apiVersion === API_VERSION) documents.push({ file, index, value, locators });
    else if (value.apiVersion.startsWith("plumb/"))
      problems.push(unsupportedApiVersion(value.apiVersion, locators));
  });
  return { documents, problems };
}

const lazyLocators = (load: () => DocumentLocators): DocumentLocators => {
  let loaded: DocumentLocators | undefined;
  const get = () => (loaded ??= load());
  return {
    key: (path) => get().key(path),
    value: (path) => get().value(path),
    get start() {
      return get().start;
    },
  };
};

const fallbackLocators = (file: string): DocumentLocators => ({
  key: () => fileStart(file),
  value: () => fileStart(file),
  start: fileStart(file),
});

const unsupportedApiVersion = (apiVersion: string, locators: DocumentLocators): Problem =>
  problemAt(
    locators.value(["apiVersion"]),
    "error",
    "unsupported-api-version",
    "apiVersion",
    `apiVersion "${apiVersion}" is not supported; use "${API_VERSION}"`,
  );

/** The guarded path: the `yaml` parser with a line counter, alias limits and precise errors. */
export function parseWithPositions(text: string, file: string, allDocuments = false): ParseResult {
  const problems: Problem[] = [];
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
    if (allDocuments && isRecord(value)) documents.push({ file, index, value, locators });
    if (allDocuments || !isRecord(value) || typeof value.apiVersion !== "string") return;
    if (value.apiVersion === API_VERSION) documents.push({ file, index, value, locators });
    else if (value.apiVersion.startsWith("plumb/"))
      problems.push(unsupportedApiVersion(value.apiVersion, locators));
  });
  return { documents, problems };
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const firstLine = (message: string): string => message.split("\n")[0]?.trim() ?? message;
