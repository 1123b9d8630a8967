import { Composer, type Document, LineCounter, Parser, visit } from "yaml";
import { PlumbError } from "../../errors.js";
import { classifyDocument } from "../document-kind.js";
import { buildLocators, type DocumentLocators, documentStart } from "../locate.js";
import type { Problem, Severity, SourceLocation } from "../types.js";
import {
  checkYamlShape,
  crowdedMappingAt,
  duplicateKeyMessage,
  emptyDocumentRunAt,
  hopelessNestingAt,
  lexerStall,
  lexerStallAt,
  MAX_MAPPING_KEYS,
  tooDeep,
  tooManyEmptyDocuments,
  tooManyKeys,
} from "./yaml-shape.js";
import { emptiedTextWarning } from "../rules/emptied-rules.js";
import { type ComposedDocument, composeDocuments } from "./compose/cst-compose.js";
import { composePlainText } from "./compose/line-compose.js";
import { yamlMessage } from "./yaml-message.js";

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
  /**
   * Read by line-compose.ts: every key and string is printable ASCII on one line, and no key is
   * `__proto__`, so checkTextCharacters and checkProtoKeys have nothing to find (validate.ts).
   */
  plainText?: true;
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

// One decoder for every file: without `stream` a decode keeps no state between calls.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

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
    return { text: STRICT_UTF8.decode(bytes) };
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
export function parseManifestText(text: string, file: string, yamlOnly = false): ParseResult {
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
  const stall = lexerStallAt(text);
  if (stall !== undefined) {
    const lines = text.slice(0, stall).split("\n");
    const at = { file, line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
    return { documents: [], problems: [lexerStall(at)] };
  }
  const emptyRun = emptyDocumentRunAt(text);
  if (emptyRun !== undefined) {
    const line = text.slice(0, emptyRun).split("\n").length;
    return { documents: [], problems: [tooManyEmptyDocuments({ file, line, column: 1 })] };
  }
  const result = parseWithPositions(text, file, false, yamlOnly);
  const emptied = emptiedTextWarning(text, file, result.documents.length);
  if (emptied) result.problems.push(emptied);
  return result;
}

/**
 * Parses every document with the `yaml` package (the one YAML parser: alias limits, exact error
 * positions). Field positions are not kept: they are read again from the text when first asked for
 * (a problem, a diff line), so a loaded file holds its values and its text, not its YAML tree (~9 KB
 * per manifest, held by the controller's snapshot). `allDocuments`: every document that is a
 * mapping or list, unclassified, with its positions at hand (compact-manifest.ts reads one back).
 */
export function parseWithPositions(
  text: string,
  file: string,
  allDocuments = false,
  yamlOnly = false,
): ParseResult {
  const problems: Problem[] = [];
  const lineCounter = new LineCounter();
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  // A big file keeps yaml's tree (below), which only yaml's composer builds.
  const fast = !allDocuments && !yamlOnly && text.length <= KEEP_TREE_OVER_CHARS;
  // The plainest texts: values straight from the text (line-compose.ts), before yaml's parser.
  const plain = fast ? composePlainText(text) : undefined;
  if (plain)
    return composedResult(plain, file, (offset) => lineAt(text, file, offset), rereader(text, file), true);
  let parsed;
  try {
    parsed = parseYaml(text, lineCounter, fast);
    if (typeof parsed === "number") return { documents: [], problems: [tooManyKeys(at(parsed))] };
  } catch (error) {
    problems.push(parseFailure(error, file));
    return { documents: [], problems };
  }
  const positions = rereader(text, file);
  if (!Array.isArray(parsed)) return composedResult(parsed.composed, file, at, positions);
  const docs = parsed;
  const documents: ParsedDocument[] = [];
  docs.forEach((doc, index) => {
    // The parser catches its own stack overflow on deep nesting, once per level: say it once.
    const overflow = doc.errors.find((error) => STACK_OVERFLOW.test(error.message));
    if (overflow) problems.push(tooDeep(at(overflow.pos[0])));
    for (const error of doc.errors) {
      if (STACK_OVERFLOW.test(error.message)) continue;
      const duplicate = error.code === "DUPLICATE_KEY";
      const message =
        (duplicate && duplicateKeyMessage(doc, text, error.pos[0])) || yamlMessage(error.message);
      problems.push(
        problemAt(at(error.pos[0]), "error", duplicate ? "duplicate-key" : "yaml-syntax", "", message),
      );
    }
    for (const warning of doc.warnings) {
      problems.push(
        problemAt(at(warning.pos[0]), "warning", "yaml-warning", "", yamlMessage(warning.message)),
      );
    }
    if (doc.errors.length > 0) return;
    const shape = checkYamlShape(doc, at);
    problems.push(...shape);
    if (shape.length > 0) return;
    const start = documentStart(doc, lineCounter, file);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      problems.push(aliasProblem(error, start, doc, at));
      return;
    }
    if (allDocuments) {
      // A list too: manifest-in-list points into it.
      if (typeof value === "object" && value !== null)
        documents.push({
          file,
          index,
          value: value as Record<string, unknown>,
          locators: buildLocators(doc, lineCounter, file),
        });
      return;
    }
    // A big file is rare and hostile more often than not (50,000 unknown keys): its problems need
    // positions, and parsing it again would double its cost. Keep its tree instead.
    const locators =
      text.length > KEEP_TREE_OVER_CHARS
        ? buildLocators(doc, lineCounter, file)
        : lazyLocators(start, positions, index);
    const kind = classifyDocument(value, locators);
    if (kind === "plumb") documents.push({ file, index, value: value as Record<string, unknown>, locators });
    else if (kind) problems.push(kind);
  });
  return { documents, problems };
}

/** The plumb documents, and problems of others, of a text composed by cst-compose.ts: it has no errors. */
function composedResult(
  composed: readonly ComposedDocument[],
  file: string,
  at: (offset: number) => SourceLocation,
  positions: (index: number) => DocumentLocators | undefined,
  plainText = false,
): ParseResult {
  const documents: ParsedDocument[] = [];
  const problems: Problem[] = [];
  composed.forEach(({ value, start }, index) => {
    const locators = lazyLocators(at(start), positions, index);
    const kind = classifyDocument(value, locators);
    if (kind !== "plumb") {
      if (kind) problems.push(kind);
      return;
    }
    const doc: ParsedDocument = { file, index, value: value as Record<string, unknown>, locators };
    if (plainText) doc.plainText = true;
    documents.push(doc);
  });
  return { documents, problems };
}

/** Where `offset` is in `text`, counted without a LineCounter (one document start per text). */
function lineAt(text: string, file: string, offset: number): SourceLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { file, line, column: offset - lineStart + 1 };
}

/** Files past this many characters keep their positional tree (see parseWithPositions). */
export const KEEP_TREE_OVER_CHARS = 64 * 1024;

/** A parsed document as it crosses a thread (parse-pool.ts): its value and start, no closures. */
export type PlainDocument = {
  index: number;
  value: Record<string, unknown>;
  start: SourceLocation;
  plainText?: true;
};

/** Documents parsed on another thread, given lazy positions again: read from `text` when first asked. */
export function withLocators(file: string, text: string, plain: readonly PlainDocument[]): ParsedDocument[] {
  const positions = rereader(text, file);
  return plain.map(({ index, value, start, plainText }) => {
    const doc: ParsedDocument = { file, index, value, locators: lazyLocators(start, positions, index) };
    if (plainText) doc.plainText = true;
    return doc;
  });
}

/**
 * The file's documents, or the offset of a mapping with too many keys (crowdedMappingAt). Every
 * entry of a mapping but its last is followed by at least one character (a line break or a
 * comma), so a text shorter than MAX_MAPPING_KEYS characters cannot hold too many: its tokens are
 * not walked (manifests are ~1 KB).
 */
function parseYaml(text: string, lineCounter: LineCounter, fast = false) {
  const tokens = new Parser(lineCounter.addNewLine).parse(text);
  const crowded = text.length >= MAX_MAPPING_KEYS ? crowdedMappingAt(tokens) : undefined;
  if (crowded !== undefined) return crowded;
  // Most texts: values straight from the tokens (cst-compose.ts); the rest as yaml composes them.
  const composed = fast ? composeDocuments(tokens) : undefined;
  return composed ? { composed } : new Composer({ prettyErrors: false }).compose(tokens);
}

/** The locators of each document of `text`, parsed again on the first call and kept. */
function rereader(text: string, file: string): (index: number) => DocumentLocators | undefined {
  let all: DocumentLocators[] | undefined;
  return (index) => {
    if (!all) {
      const lineCounter = new LineCounter();
      const docs = parseYaml(text, lineCounter);
      all =
        typeof docs === "number" || !Array.isArray(docs)
          ? []
          : docs.map((doc) => buildLocators(doc, lineCounter, file));
    }
    return all[index];
  };
}

/**
 * Locators that know the document's start and parse the rest only when asked. Made here, not
 * inline in parseWithPositions: a closure there would keep that call's whole scope (its
 * LineCounter, its problems) alive for as long as the manifest is kept.
 */
function lazyLocators(
  start: SourceLocation,
  positions: (index: number) => DocumentLocators | undefined,
  index: number,
): DocumentLocators {
  const load = () => positions(index);
  return {
    key: (path) => load()?.key(path) ?? start,
    value: (path) => load()?.value(path) ?? start,
    start,
  };
}

const STACK_OVERFLOW = /Maximum call stack size exceeded/;

/**
 * The parser threw: a syntax error it could not keep to a document, or its own recursion ran out of
 * stack on a shape no check before it caught (said as what it is, not as the engine's RangeError).
 */
function parseFailure(error: unknown, file: string): Problem {
  if (error instanceof RangeError && STACK_OVERFLOW.test(error.message))
    return problemAt(
      fileStart(file),
      "error",
      "yaml-too-complex",
      "",
      "the YAML parser ran out of stack on this file (it recurses once per nesting level and per empty document in a row); split the file or simplify it",
    );
  return problemAt(
    fileStart(file),
    "error",
    "yaml-syntax",
    "",
    `cannot parse YAML: ${yamlMessage(reason(error))}`,
  );
}

/** Where the first alias named `name` is (the one without an anchor before it), if it has a range. */
function aliasOffset(doc: Document, name: string): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias(_, node) {
      if (node.source !== name || !node.range) return undefined;
      offset = node.range[0];
      return visit.BREAK;
    },
  });
  return offset;
}

/**
 * toJS fails on an alias without its anchor (said at the alias: `at` turns its offset into a
 * position), or on an alias bomb (said at the document's start): say which.
 */
function aliasProblem(
  error: unknown,
  start: SourceLocation,
  doc: Document,
  at: (offset: number) => SourceLocation,
): Problem {
  const unresolved = /^Unresolved alias[^:]*: (.*)$/.exec(reason(error));
  if (unresolved) {
    const offset = aliasOffset(doc, unresolved[1]!);
    return problemAt(
      offset === undefined ? start : at(offset),
      "error",
      "yaml-unresolved-alias",
      "",
      `alias *${unresolved[1]} has no anchor &${unresolved[1]} before it in this document`,
    );
  }
  const message = `document expands too many aliases (limit ${MAX_ALIAS_COUNT}): ${reason(error)}`;
  return problemAt(start, "error", "yaml-alias-limit", "", message);
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
