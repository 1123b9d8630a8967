import type { DocumentLocators } from "../locate.js";
import type { SourceLocation } from "../types.js";

// Positions found only when asked for: a loaded manifest keeps its values and its text, not its
// YAML tree (parse.ts parseWithPositions).

/**
 * Locators that know the document's start and parse the rest only when asked. Made here, not
 * inline in parseWithPositions: a closure there would keep that call's whole scope (its
 * LineCounter, its problems) alive for as long as the manifest is kept.
 */
export function lazyLocators(
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

/** Where `offset` is in `text`, counted without a LineCounter (one document start per text). */
export function lineAt(text: string, file: string, offset: number): SourceLocation {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { file, line, column: offset - lineStart + 1 };
}
