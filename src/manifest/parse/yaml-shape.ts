import { type CST, type Document, type Node, Scalar, YAMLMap, YAMLSeq } from "yaml";
import type { Problem, SourceLocation } from "../types.js";
import { problem } from "./yaml-shape/shape-problem.js";

export {
  emptyDocumentRunAt,
  hopelessNestingAt,
  MAX_EMPTY_DOCUMENTS,
  tooManyEmptyDocuments,
} from "./yaml-shape/overflow-checks.js";
export { lexerStall, lexerStallAt } from "./yaml-shape/lexer-stall.js";

// Checks on the parsed YAML tree that the `yaml` package does not do. It reports a key repeated
// as such (DUPLICATE_KEY, a parse error); keys that are equal only once read as JavaScript object
// keys (`1` and "1") are found here with one set per mapping. Everything is iterative: a hostile
// file nests deep enough to overflow any recursive walk.

/** Levels of mappings and lists a manifest may nest; real manifests use fewer than ten. */
export const MAX_NESTING = 64;

export const tooDeep = (at: SourceLocation): Problem =>
  problem(at, "too-deep", `nested more than ${MAX_NESTING} levels deep; manifests are far shallower`);

/**
 * A plain `<<` key: YAML 1.1's merge key, which YAML 1.2 (plumb's core schema) does not have. Read
 * as written it is a field named "<<" (an unknown field, or a label of a mapping's value), which
 * is not what its author meant; plumb refuses it where it stands instead of merging.
 */
const isMergeKey = (key: Scalar | null): boolean =>
  key !== null && key.value === "<<" && (key.type === undefined || key.type === Scalar.PLAIN);

const MERGE_KEY_MESSAGE =
  'YAML merge keys ("<<") are not supported (YAML 1.2 has none): write the fields in this mapping; an alias can still stand for a whole value ("labels: *common")';

/** Duplicate and merge keys, keys that are not plain scalars, and nesting past MAX_NESTING, in one pass. */
export function checkYamlShape(doc: Document, at: (offset: number) => SourceLocation): Problem[] {
  const problems: Problem[] = [];
  let reportedDepth = false;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.value, depth: 1 }];
  const offset = (node: unknown) => (node as Node | null)?.range?.[0] ?? 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!(node instanceof YAMLMap) && !(node instanceof YAMLSeq)) continue;
    if (depth > MAX_NESTING) {
      if (!reportedDepth) problems.push(tooDeep(at(offset(node))));
      reportedDepth = true;
      continue;
    }
    if (node instanceof YAMLSeq) {
      for (const item of node) stack.push({ node: item, depth: depth + 1 });
      continue;
    }
    const seen = new Set<string>();
    for (const pair of node.pairs()) {
      const key = pair.key as Node | null;
      // A scalar can hold an object too (a !!binary key is a Uint8Array): yaml would stringify it
      // with a process warning.
      if (
        key !== null &&
        (!(key instanceof Scalar) || (typeof key.value === "object" && key.value !== null))
      ) {
        const message = "a mapping key must be a plain string, not a list, mapping, alias or binary";
        problems.push(problem(at(offset(key)), "complex-key", message));
      } else if (isMergeKey(key)) {
        problems.push(problem(at(offset(key)), "yaml-merge-key", MERGE_KEY_MESSAGE));
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

/**
 * The parser's DUPLICATE_KEY error said our way, naming the key. The parser keeps the first key's
 * node only, so the repeated key is the mapping key whose text stands at the error's offset.
 */
export function duplicateKeyMessage(doc: Document, text: string, offset: number): string | undefined {
  let name: string | undefined;
  const stack: unknown[] = [doc.value];
  for (let steps = 0; stack.length > 0 && steps < 1_000_000; steps++) {
    const node = stack.pop();
    if (node instanceof YAMLSeq) stack.push(...node);
    if (!(node instanceof YAMLMap)) continue;
    for (const pair of node.pairs()) {
      const key = pair.key as Node | null;
      if (key instanceof Scalar) {
        const value = String(key.value);
        const at = /["']/.test(text[offset] ?? "") ? offset + 1 : offset;
        if (text.startsWith(value, at) && value.length > (name?.length ?? -1)) name = value;
      }
      stack.push(pair.value);
    }
  }
  return name === undefined ? undefined : `key "${name}" appears twice in this mapping`;
}

/**
 * Keys one mapping may hold. No manifest comes near; the parser (yaml 3.0.0-2) checks each new key
 * against every earlier one when it builds a mapping, so a hostile file of 50,000 keys in one
 * mapping took 6.5 s. Counted on the parser's first, linear stage (the CST), before any mapping
 * is built.
 */
export const MAX_MAPPING_KEYS = 2000;

export const tooManyKeys = (at: SourceLocation): Problem =>
  problem(
    at,
    "too-many-keys",
    `a mapping holds more than ${MAX_MAPPING_KEYS} keys; manifests hold far fewer`,
  );

/** The offset of the first mapping in `tokens` with more than MAX_MAPPING_KEYS entries; undefined if none. */
export function crowdedMappingAt(tokens: readonly CST.Token[]): number | undefined {
  const stack: Array<CST.Token | null | undefined> = [...tokens];
  while (stack.length > 0) {
    const token = stack.pop();
    if (!token) continue;
    if (token.type === "document") stack.push(token.value);
    else if (token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection") {
      const mapping =
        token.type === "block-map" || (token.type === "flow-collection" && token.start.source === "{");
      if (mapping && token.items.length > MAX_MAPPING_KEYS) return token.offset;
      for (const item of token.items) stack.push(item.key, item.value);
    }
  }
  return undefined;
}
