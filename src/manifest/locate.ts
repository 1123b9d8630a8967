import { Alias, type Document, type LineCounter, type Node, type Pair, Scalar, YAMLMap, YAMLSeq } from "yaml";
import type { SourceLocation } from "./types.js";

/** A path into a document, e.g. ["spec", "secrets", 0, "name"]. */
export type FieldPath = readonly (string | number)[];
type Locator = (path: FieldPath) => SourceLocation;

/** Points at a field's key ("key") or at its value ("value"); both fall back to the nearest ancestor. */
export type DocumentLocators = { key: Locator; value: Locator; start: SourceLocation };

type Found = { key?: Node; value?: Node };

/** Builds locators over one parsed YAML document; positions are 1-based line and column. */
export function buildLocators(doc: Document, lineCounter: LineCounter, file: string): DocumentLocators {
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const root = doc.value;
  const docStart = at(root?.range?.[0] ?? 0);
  const start = documentStart(doc, lineCounter, file);

  const locate =
    (part: "key" | "value"): Locator =>
    (path) => {
      const trail = walk(doc, root, path);
      const last = trail.at(-1);
      const node = last && trail.length === path.length ? (last[part] ?? last.key) : last?.key;
      return node?.range ? at(node.range[0]) : docStart;
    };
  return { key: locate("key"), value: locate("value"), start };
}

/**
 * Where a document is shown to start: its `kind` key, else its first node. What buildLocators
 * gives as `start`, without indexing anything (parse.ts asks it of every document).
 */
export function documentStart(doc: Document, lineCounter: LineCounter, file: string): SourceLocation {
  const root = doc.value instanceof Alias ? doc.value.resolve(doc) : doc.value;
  let offset = doc.value?.range?.[0] ?? 0;
  if (root instanceof YAMLMap) {
    for (const pair of root.pairs()) {
      if (!(pair.key instanceof Scalar) || String(pair.key.value) !== "kind") continue;
      if (pair.key.range) offset = pair.key.range[0];
      break;
    }
  }
  const { line, col } = lineCounter.linePos(offset);
  return { file, line, column: col };
}

/** Each mapping's pairs by key, built on first lookup: a linear search per lookup was quadratic. */
const pairIndexes = new WeakMap<YAMLMap, Map<string, Pair>>();
function pairByKey(map: YAMLMap, key: string): Pair | undefined {
  let index = pairIndexes.get(map);
  if (!index) {
    index = new Map();
    for (const pair of map.pairs()) {
      if (!(pair.key instanceof Scalar)) continue;
      const name = String(pair.key.value);
      if (!index.has(name)) index.set(name, pair);
    }
    pairIndexes.set(map, index);
  }
  return index.get(key);
}

/** Follows `path` as far as it exists; one entry per segment found. */
function walk(doc: Document, root: unknown, path: FieldPath): Found[] {
  const trail: Found[] = [];
  let current: unknown = root;
  for (const segment of path) {
    if (current instanceof Alias) current = current.resolve(doc);
    let found: Found | undefined;
    if (current instanceof YAMLMap) {
      const pair = pairByKey(current as YAMLMap, String(segment));
      if (pair) found = { key: pair.key, value: pair.value ?? undefined };
    } else if (current instanceof YAMLSeq && typeof segment === "number") {
      const item = current[segment] as Node | undefined;
      if (item) found = { key: item, value: item };
    }
    if (!found) break;
    trail.push(found);
    current = found.value;
  }
  return trail;
}
