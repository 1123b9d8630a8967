import jsonpatch, { type Operation } from "fast-json-patch";

// RFC 6902 operations in a stable, readable order. fast-json-patch walks object keys last to first,
// so its output follows no order a reader expects. plumb sorts the operations by path, segment by
// segment, alphabetically (`/source_config/...` before `/source_revision_config/...`). Operations
// inside one array keep fast-json-patch's order: removals run from the highest index down, so
// reordering them would change what the patch does. The sorted list is still a valid patch from
// live to desired: operations on different object keys do not affect each other. Pure.

const INDEX = /^(?:0|[1-9]\d*|-)$/;

/** The path up to its first array index: operations sharing it keep their relative order. */
function orderKey(path: string): string[] {
  // Stryker disable next-line MethodExpression: equivalent, every path starts with "/": its empty first segment is in every key
  const segments = path.split("/").slice(1);
  const index = segments.findIndex((segment) => INDEX.test(segment));
  return index === -1 ? segments : segments.slice(0, index);
}

function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = a[i]!;
    const y = b[i]!;
    // Stryker disable next-line EqualityOperator: equivalent, x and y differ here
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The operations sorted by path (stable: the relative order inside one array is kept). */
export function sortOperations(operations: readonly Operation[]): Operation[] {
  return operations
    .map((operation) => ({ operation, key: orderKey(operation.path) }))
    .sort((a, b) => compareKeys(a.key, b.key))
    .map(({ operation }) => operation);
}

/** RFC 6902 operations from `live` to `desired` (fast-json-patch), in plumb's stable order. */
export const diffDocuments = (live: object, desired: object): Operation[] =>
  sortOperations(jsonpatch.compare(live, desired));
