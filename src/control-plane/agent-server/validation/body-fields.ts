// What every agent-server body check shares: the issue shape, objects, paging, enums and metadata.

/** One entry of an HTTPValidationError (spec 2.6). */
export type ValidationIssue = { loc: Array<string | number>; msg: string; type: string };

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A search body's `limit` (1-1,000; absent or null: `fallback`) and `offset` (≥ 0; absent or null:
 * 0), refused with the open-source server's messages otherwise (thread search, the store's searches).
 */
export function pageParams(body: Record<string, unknown>, fallback: number, issues: ValidationIssue[]) {
  const limit = limitParam(body, fallback, issues);
  const offset = body.offset ?? 0;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0)
    issues.push({
      loc: ["body", "offset"],
      msg: "Input should be a non-negative integer",
      type: "int_parsing",
    });
  return { limit, offset: offset as number };
}

/** A body's `limit` (1-1,000; absent or null: `fallback`), refused with the open-source server's message. */
export function limitParam(
  body: Record<string, unknown>,
  fallback: number,
  issues: ValidationIssue[],
): number {
  const limit = body.limit ?? fallback;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 1000)
    issues.push({
      loc: ["body", "limit"],
      msg: "Input should be an integer from 1 to 1000",
      type: "int_parsing",
    });
  return limit as number;
}

export const dictIssue = (loc: ValidationIssue["loc"]): ValidationIssue => ({
  loc,
  msg: "Input should be a valid dictionary",
  type: "dict_type",
});

export function optionalEnum<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  fallback: T,
  issues: ValidationIssue[],
): T {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  issues.push({
    loc: ["body", field],
    msg: `Input should be ${allowed.map((a) => `'${a}'`).join(", ")}`,
    type: "enum",
  });
  return fallback;
}

export function optionalMetadata(
  body: Record<string, unknown>,
  issues: ValidationIssue[],
): Record<string, unknown> {
  const value = body.metadata;
  if (value === undefined || value === null) return {};
  if (isObject(value)) return value;
  issues.push(dictIssue(["body", "metadata"]));
  return {};
}
