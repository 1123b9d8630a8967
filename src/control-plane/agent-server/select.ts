import type { ValidationIssue } from "./validation.js";

/** `select` of the search routes: the fields to answer, each one the route allows. */

export function parseSelect(
  raw: unknown,
  allowed: readonly string[],
  issues: ValidationIssue[],
): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (Array.isArray(raw) && raw.every((field) => typeof field === "string" && allowed.includes(field)))
    return raw as string[];
  issues.push({
    loc: ["body", "select"],
    msg: `Input should be a list of ${allowed.map((f) => `'${f}'`).join(", ")}`,
    type: "enum",
  });
  return undefined;
}

/** The selected fields of a record, all of them without `select`. */
export function pick<T extends object>(record: T, select: readonly string[] | undefined): Partial<T> {
  if (select === undefined) return record;
  return Object.fromEntries(Object.entries(record).filter(([field]) => select.includes(field))) as Partial<T>;
}
