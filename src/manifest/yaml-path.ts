import { type Document, type Node, Scalar, YAMLMap, YAMLSeq } from "yaml";
import type { FieldPath } from "./locate.js";

// Reads one node of a parsed YAML document by path: the `yaml` package's getIn, which its
// version 3 dropped. Aliases are not followed (a value behind an alias is not edited in place).

/** The node at `path` (a mapping's key or a list's index per segment); undefined if absent. */
export function nodeAt(doc: Document, path: FieldPath): Node | undefined {
  let current: unknown = doc.value;
  for (const segment of path) {
    if (current instanceof YAMLMap) current = current.get(segment);
    else if (current instanceof YAMLSeq && typeof segment === "number") current = current[segment];
    else return undefined;
    if (current === null || current === undefined) return undefined;
  }
  return current as Node;
}

/** The value of the scalar at `path`; undefined when the path is absent or not a scalar. */
export function scalarAt(doc: Document, path: FieldPath): unknown {
  const node = nodeAt(doc, path);
  return node instanceof Scalar ? node.value : undefined;
}

/** Removes the mapping entry at `path`; false when there is none. */
export function deleteAt(doc: Document, path: FieldPath): boolean {
  const parent = path.length === 1 ? doc.value : nodeAt(doc, path.slice(0, -1));
  return parent instanceof YAMLMap ? parent.delete(path.at(-1)) : false;
}
