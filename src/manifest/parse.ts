import { CORE_SCHEMA, loadAll } from "js-yaml";
import { LineCounter, parseAllDocuments } from "yaml";
import { PlumbError } from "../errors.js";
import { classifyDocument } from "./document-kind.js";
import { buildLocators, type DocumentLocators } from "./locate.js";
import type { Problem, Severity, SourceLocation } from "./types.js";
import { checkYamlShape, hopelessNestingAt, MAX_NESTING, tooDeep, valueDepth } from "./yaml-shape.js";
import { emptiedTextWarning } from "./emptied-rules.js";

/** Files over this size are refused unread: manifests are small, and YAML parsing is not free. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Raises or lowers MAX_MANIFEST_BYTES for validate, plan, apply, drift and the controller. */
const MAX_MANIFEST_BYTES_ENV = "PLUMB_MAX_MANIFEST_BYTES";

/** The manifest size limit an environment asks for; a value that is not a positive integer is an error. */
export function maxManifestBytesFrom(env: NodeJS.ProcessEnv): number {
  const text = env[MAX_MANIFEST_BYTES_ENV];
  if (text === undefined || text === "") return MAX_MANIFEST_BYTES;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new PlumbError(
      "invalid-setting",
      `${MAX_MANIFEST_BYTES_ENV} must be a positive number of bytes, not "${text}"`,
      { exitCode: 1 },
    );
  return value;
}
/** Aliases a document may expand; far above what a manifest needs, far below a "billion laughs". */
const MAX_ALIAS_COUNT = 100;

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
  maxBytes = MAX_MANIFEST_BYTES,
): { text: string } | { problem: Problem } {
  if (bytes.byteLength > maxBytes) {
    return { problem: tooLarge(file, bytes.byteLength, maxBytes) };
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return {
      problem: problemAt(fileStart(file), "error", "invalid-encoding", "", "file is not valid UTF-8 text"),
    };
  }
}

export const tooLarge = (file: string, size: number, maxBytes = MAX_MANIFEST_BYTES): Problem =>
  problemAt(
    fileStart(file),
    "error",
    "manifest-too-large",
    "",
    `file is ${size} bytes, over the ${maxBytes}-byte limit for manifests; it is not read (${MAX_MANIFEST_BYTES_ENV} changes the limit)`,
  );

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
  const hopeless = hopelessNestingAt(text);
  if (hopeless !== undefined) {
    const lines = text.slice(0, hopeless).split("\n");
    const at = { file, line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
    return { documents: [], problems: [tooDeep(at)] };
  }
  const result = parseFast(text, file) ?? parseWithPositions(text, file);
  const emptied = emptiedTextWarning(text, file, result.documents.length);
  if (emptied) result.problems.push(emptied);
  return result;
}

// Anchors and aliases are rare in manifests; any hint of them takes the guarded path (alias limit).
const MAY_HAVE_ALIASES = /(^|[\s[{,])[&*]/m;
// So are complex keys (`? [a, b]`, `[a, b]: c`), which js-yaml would silently turn into strings.
const MAY_HAVE_COMPLEX_KEYS = /^\s*(- +)*\?(\s|$)|[\]}]\s*:(\s|$)/m;

/**
 * The common case, about five times faster: js-yaml (YAML 1.2 core schema) reads the values and
 * source positions are computed only when something asks for one. Anything unusual (an error,
 * a duplicate key, a tag, an alias) returns undefined, and the positional parser takes over.
 */
function parseFast(text: string, file: string): ParseResult | undefined {
  if (MAY_HAVE_ALIASES.test(text) || MAY_HAVE_COMPLEX_KEYS.test(text)) return undefined;
  const values: unknown[] = [];
  try {
    loadAll(text, (doc) => values.push(doc), { schema: CORE_SCHEMA });
  } catch {
    return undefined;
  }
  if (values.some((value) => valueDepth(value) > MAX_NESTING)) return undefined;
  let positions: ParsedDocument[] | undefined;
  const locatorsOf = (index: number) => () => {
    positions ??= parseWithPositions(text, file, true).documents;
    return positions.find((d) => d.index === index)?.locators ?? fallbackLocators(file);
  };
  const documents: ParsedDocument[] = [];
  const problems: Problem[] = [];
  // Every plan line names its document's line (the kind key): for a one-document file a text scan
  // finds it, so positions are parsed only when a problem or a diff needs one.
  const knownStart = values.length === 1 ? kindKeyStart(text, file) : undefined;
  values.forEach((value, index) => {
    const locators = lazyLocators(locatorsOf(index), knownStart);
    const kind = classifyDocument(value, locators);
    if (kind === "plumb") documents.push({ file, index, value: value as Record<string, unknown>, locators });
    else if (kind) problems.push(kind);
  });
  return { documents, problems };
}

const lazyLocators = (load: () => DocumentLocators, knownStart?: SourceLocation): DocumentLocators => {
  let loaded: DocumentLocators | undefined;
  const get = () => (loaded ??= load());
  return {
    key: (path) => get().key(path),
    value: (path) => get().value(path),
    get start() {
      return knownStart ?? get().start;
    },
  };
};

const KIND_KEY = /^kind[ \t]*:/gm;

/**
 * Where the top-level `kind:` key of a one-document file is, when a line starts with it exactly
 * once (a key at column 1 can only be a top-level key); undefined otherwise (the parser decides).
 */
function kindKeyStart(text: string, file: string): SourceLocation | undefined {
  const found = [...text.matchAll(KIND_KEY)];
  if (found.length !== 1) return undefined;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < found[0]!.index; i = text.indexOf("\n", i + 1)) line++;
  return { file, line, column: 1 };
}

const fallbackLocators = (file: string): DocumentLocators => ({
  key: () => fileStart(file),
  value: () => fileStart(file),
  start: fileStart(file),
});

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
    // uniqueKeys is quadratic in the keys of a mapping: checkYamlShape finds duplicates instead.
    docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  } catch (error) {
    problems.push(
      problemAt(fileStart(file), "error", "yaml-syntax", "", `cannot parse YAML: ${reason(error)}`),
    );
    return { documents: [], problems };
  }
  const documents: ParsedDocument[] = [];
  docs.forEach((doc, index) => {
    // The parser catches its own stack overflow on deep nesting, once per level: say it once.
    const overflow = doc.errors.find((error) => STACK_OVERFLOW.test(error.message));
    if (overflow) problems.push(tooDeep(at(overflow.pos[0])));
    for (const error of doc.errors) {
      if (STACK_OVERFLOW.test(error.message)) continue;
      const code = error.code === "DUPLICATE_KEY" ? "duplicate-key" : "yaml-syntax";
      problems.push(problemAt(at(error.pos[0]), "error", code, "", firstLine(error.message)));
    }
    for (const warning of doc.warnings) {
      problems.push(problemAt(at(warning.pos[0]), "warning", "yaml-warning", "", firstLine(warning.message)));
    }
    if (doc.errors.length > 0) return;
    const shape = checkYamlShape(doc, at);
    problems.push(...shape);
    if (shape.length > 0) return;
    const locators = buildLocators(doc, lineCounter, file);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      problems.push(aliasProblem(error, locators.start));
      return;
    }
    // Lazy positions (parseFast) need every document, a list too (manifest-in-list points into it).
    if (allDocuments && typeof value === "object" && value !== null)
      documents.push({ file, index, value: value as Record<string, unknown>, locators });
    if (allDocuments) return;
    const kind = classifyDocument(value, locators);
    if (kind === "plumb") documents.push({ file, index, value: value as Record<string, unknown>, locators });
    else if (kind) problems.push(kind);
  });
  return { documents, problems };
}

const STACK_OVERFLOW = /Maximum call stack size exceeded/;

/** toJS fails on an alias without its anchor, or on an alias bomb: say which. */
function aliasProblem(error: unknown, at: SourceLocation): Problem {
  const unresolved = /^Unresolved alias[^:]*: (.*)$/.exec(reason(error));
  if (unresolved)
    return problemAt(
      at,
      "error",
      "yaml-unresolved-alias",
      "",
      `alias *${unresolved[1]} has no anchor &${unresolved[1]} before it in this document`,
    );
  const message = `document expands too many aliases (limit ${MAX_ALIAS_COUNT}): ${reason(error)}`;
  return problemAt(at, "error", "yaml-alias-limit", "", message);
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const firstLine = (message: string): string => message.split("\n")[0]?.trim() ?? message;
