import { type CST, type Document, parseAllDocuments, parseDocument, Parser } from "yaml";
import { PlumbError } from "../../errors.js";
import { lexerStall, lexerStallAt } from "./yaml-shape.js";

// The one way into the `yaml` package's parser for text a user, a git commit or a server wrote,
// outside the manifest loader (parse.ts, which runs the same checks first). yaml 3.0.0-2's lexer
// loops for ever on a lone CR, U+2028 or U+2029 ending a line before a document (yaml-shape.ts,
// lexerStallAt): every reader here refuses such a text first, with the loader's yaml-line-break
// message at the file, line and column. eslint.config.js refuses a direct parse elsewhere in src/.

/** Where yaml's lexer would never return on `text`, as file:line:col, or undefined. */
function stallPosition(text: string, file: string): string | undefined {
  const offset = lexerStallAt(text);
  if (offset === undefined) return undefined;
  const lines = text.slice(0, offset).split("\n");
  return `${file}:${lines.length}:${(lines.at(-1)?.length ?? 0) + 1}`;
}

/** True when yaml can read `text` at all (it would not loop for ever on it). */
export const yamlReadable = (text: string): boolean => lexerStallAt(text) === undefined;

/** Throws the loader's yaml-line-break problem as an error (invalid-manifests) if yaml would hang on `text`. */
function assertYamlReadable(text: string, file: string): void {
  const at = stallPosition(text, file);
  if (at === undefined) return;
  const { message } = lexerStall({ file, line: 0, column: 0 });
  throw new PlumbError("invalid-manifests", `${at}: ${message} (yaml-line-break)`);
}

/** Every document of `text` (yaml's parseAllDocuments, an empty stream as no document). */
export function readYamlDocuments(text: string, file: string): Document.Parsed[] {
  assertYamlReadable(text, file);
  const docs = parseAllDocuments(text);
  return Array.isArray(docs) ? docs : [];
}

/** The first document of `text` (yaml's parseDocument). */
export function readYamlDocument(text: string, file: string): Document.Parsed {
  assertYamlReadable(text, file);
  return parseDocument(text);
}

/** yaml's CST of `text`; `onNewLine` gets the offset of every line start, as yaml's Parser gives it. */
export function readYamlTokens(
  text: string,
  file: string,
  onNewLine?: (offset: number) => void,
): CST.Token[] {
  assertYamlReadable(text, file);
  return [...new Parser(onNewLine).parse(text)];
}
