// Small helpers for comparing JSON-like values. null and absent mean the same thing in the API
// ("leave unchanged"), so both are "absent" here.

export type JsonObject = Record<string, unknown>;

export const isAbsent = (value: unknown): value is null | undefined => value === null || value === undefined;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Structural equality of JSON values; object key order and absent-vs-null keys do not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  // Stryker disable next-line LogicalOperator: equivalent, one side absent falls through to `a === b` (false) but for null and undefined
  if (isAbsent(a) || isAbsent(b)) return isAbsent(a) && isAbsent(b);
  // Stryker disable next-line LogicalOperator: equivalent, an array against anything else is unequal by every later branch too
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqual(item, b[index]));
  }
  // Stryker disable next-line LogicalOperator: equivalent, an object against a primitive is unequal by `a === b` too
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!deepEqual(a[key], b[key])) return false;
    return true;
  }
  return a === b;
}

/** A copy without null/undefined properties (one level). */
export function withoutAbsent(object: JsonObject | null | undefined): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object ?? {})) if (!isAbsent(value)) out[key] = value;
  return out;
}

/** Items sorted by `name` (environment variables: their order carries no meaning). */
export function sortByName<T extends { name: string }>(items: readonly T[]): T[] {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent past `<`, V8's sort asks only whether the result is negative
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
