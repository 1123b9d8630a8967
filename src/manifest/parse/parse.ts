import { Composer, LineCounter, Parser } from "yaml";
import { classifyDocument } from "../document-kind.js";
import { buildLocators, type DocumentLocators, documentStart } from "../locate.js";
import type { Problem, SourceLocation } from "../types.js";
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
import { lazyLocators, lineAt } from "./lazy-locators.js";
import {
  aliasProblem,
  fileStart,
  MAX_ALIAS_COUNT,
  parseFailure,
  problemAt,
  STACK_OVERFLOW,
} from "./parse-problems.js";

export { decodeManifestBytes, MAX_MANIFEST_BYTES, maxManifestBytesFrom, tooLarge } from "./manifest-bytes.js";
export { problemAt } from "./parse-problems.js";

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
