import { UUID_PATTERN } from "../../schema/common.js";
import { unprocessable } from "./http-errors.js";

const UUID = new RegExp(UUID_PATTERN);

function integer(
  query: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const last: unknown = Array.isArray(raw) ? raw.at(-1) : raw;
  const text = typeof last === "string" ? last : "";
  if (!/^-?\d+$/.test(text)) {
    throw unprocessable([
      {
        loc: ["query", name],
        msg: "Input should be a valid integer, unable to parse string as an integer",
        type: "int_parsing",
      },
    ]);
  }
  const value = Number(text);
  if (value < min)
    throw unprocessable([
      {
        loc: ["query", name],
        msg: `Input should be greater than or equal to ${min}`,
        type: "greater_than_equal",
      },
    ]);
  if (value > max)
    throw unprocessable([
      { loc: ["query", name], msg: `Input should be less than or equal to ${max}`, type: "less_than_equal" },
    ]);
  return value;
}

/**
 * A single-valued string query parameter: undefined when absent; given more than once, the last
 * value counts, as FastAPI reads it (docs/control-plane.md, Deployments).
 */
export function lastQueryString(query: unknown, name: string): string | undefined {
  const raw = ((query ?? {}) as Record<string, unknown>)[name];
  const last: unknown = Array.isArray(raw) ? raw.at(-1) : raw;
  return typeof last === "string" ? last : undefined;
}

/** `limit` 1..100 (default 20) and `offset` ≥ 0 (default 0), as the public API pages lists. */
export function parsePaging(query: unknown): { limit: number; offset: number } {
  const q = (query ?? {}) as Record<string, unknown>;
  return {
    limit: integer(q, "limit", 20, 1, 100),
    offset: integer(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

export function page<T>(items: T[], paging: { limit: number; offset: number }) {
  const resources = items.slice(paging.offset, paging.offset + paging.limit);
  return { resources, offset: paging.offset + resources.length };
}

/** Path ids must be uuids (422 otherwise, as the public API's typed path parameters). */
export function requireUuid(value: string, name: string): string {
  if (!UUID.test(value)) {
    throw unprocessable([{ loc: ["path", name], msg: "Input should be a valid UUID", type: "uuid_parsing" }]);
  }
  return value.toLowerCase();
}
