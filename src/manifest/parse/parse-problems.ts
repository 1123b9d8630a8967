import { type Document, visit } from "yaml";
import type { Problem, Severity, SourceLocation } from "../types.js";
import { yamlMessage } from "./yaml-message.js";

// The problems the loader says of a file it could not parse (the parser threw, an alias without its
// anchor, an alias bomb), and problemAt, how every manifest problem is made.

export const problemAt = (
  location: SourceLocation,
  severity: Severity,
  code: string,
  field: string,
  message: string,
): Problem => ({ ...location, severity, code, field, message });

export const fileStart = (file: string): SourceLocation => ({ file, line: 1, column: 1 });

/** Aliases a document may expand; far above what a manifest needs, far below a "billion laughs". */
export const MAX_ALIAS_COUNT = 100;

export const STACK_OVERFLOW = /Maximum call stack size exceeded/;

/**
 * The parser threw: a syntax error it could not keep to a document, or its own recursion ran out of
 * stack on a shape no check before it caught (said as what it is, not as the engine's RangeError).
 */
export function parseFailure(error: unknown, file: string): Problem {
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
export function aliasProblem(
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
