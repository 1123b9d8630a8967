import { type Document, isMap, isPair, isScalar, isSeq, type Node } from "yaml";
import type { Problem, SourceLocation } from "../types.js";

// Checks on the parsed YAML tree that the `yaml` package does too slowly or not at all. Its own
// `uniqueKeys` compares each key with every earlier one (50,000 keys: 15 s; 90,000: a minute), so
// duplicate keys are found here with one set per mapping. Everything is iterative: a hostile file
// nests deep enough to overflow any recursive walk.

/** Levels of mappings and lists a manifest may nest; real manifests use fewer than ten. */
export const MAX_NESTING = 64;

const problem = (at: SourceLocation, code: string, message: string): Problem => ({
  ...at,
  severity: "error",
  code,
  field: "",
  message,
});

export const tooDeep = (at: SourceLocation): Problem =>
  problem(at, "too-deep", `nested more than ${MAX_NESTING} levels deep; manifests are far shallower`);

/** Duplicate keys, keys that are not plain scalars, and nesting past MAX_NESTING, in one pass. */
export function checkYamlShape(doc: Document, at: (offset: number) => SourceLocation): Problem[] {
  const problems: Problem[] = [];
  let reportedDepth = false;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.contents, depth: 1 }];
  const offset = (node: unknown) => (node as Node | null)?.range?.[0] ?? 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth > MAX_NESTING) {
      if (!reportedDepth) problems.push(tooDeep(at(offset(node))));
      reportedDepth = true;
      continue;
    }
    if (isSeq(node)) {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
      continue;
    }
    const seen = new Set<string>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as Node | null;
      // A scalar can hold an object too (a !!binary key is a Uint8Array): yaml would stringify it
      // with a process warning.
      if (key !== null && (!isScalar(key) || (typeof key.value === "object" && key.value !== null))) {
        const message = "a mapping key must be a plain string, not a list, mapping, alias or binary";
        problems.push(problem(at(offset(key)), "complex-key", message));
      } else {
        const name = String((key?.value as string | number | boolean | null | undefined) ?? "");
        if (seen.has(name))
          problems.push(
            problem(at(offset(key)), "duplicate-key", `key "${name}" appears twice in this mapping`),
          );
        seen.add(name);
      }
      stack.push({ node: pair.value, depth: depth + 1 });
    }
  }
  return problems;
}

/** Far past MAX_NESTING, where the parsers' recursion gets slow and then overflows. */
const HOPELESS_DEPTH = 1000;

/**
 * A linear look at the raw text before any parser recurses: the offset where flow brackets, or a
 * line's run of `- ` list markers, nest past HOPELESS_DEPTH; undefined otherwise. Quoted strings
 * and comments are skipped; the precise MAX_NESTING check runs on the parsed tree.
 */
export function hopelessNestingAt(text: string): number | undefined {
  let depth = 0;
  let quote = "";
  let lineStart = true;
  let dashes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === "\n") {
      lineStart = true;
      dashes = 0;
      continue;
    }
    if (lineStart && c === "-" && (text[i + 1] === " " || text[i + 1] === "\n")) {
      if (++dashes > HOPELESS_DEPTH) return i;
      continue;
    }
    if (c !== " ") lineStart = false;
    if (c === '"' || c === "'") quote = c;
    else if (c === "#") while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    else if (c === "[" || c === "{") {
      if (++depth > HOPELESS_DEPTH) return i;
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return undefined;
}
