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

const HEX32 = /^[0-9a-f]{32}$/i;
const hyphenated = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toLowerCase();

/**
 * A UUID in the forms FastAPI's typed parameters read (pydantic, by the uuid crate's parse_str):
 * hyphenated, 32 hex digits, `{hyphenated}` and `urn:uuid:hyphenated`, any case; as the canonical
 * lower-case hyphenated string, or undefined for anything else (docs/control-plane.md "Ids").
 */
export function canonicalUuid(value: string): string | undefined {
  if (UUID.test(value)) return value.toLowerCase();
  if (HEX32.test(value)) return hyphenated(value);
  const inner = value.startsWith("{") && value.endsWith("}") ? value.slice(1, -1) : undefined;
  const urn = value.startsWith("urn:uuid:") ? value.slice("urn:uuid:".length) : undefined;
  const wrapped = inner ?? urn;
  return wrapped !== undefined && UUID.test(wrapped) ? wrapped.toLowerCase() : undefined;
}

/** Path ids must be uuids (422 otherwise, as the public API's typed path parameters). */
export function requireUuid(value: string, name: string): string {
  const id = canonicalUuid(value);
  if (id === undefined) {
    throw unprocessable([{ loc: ["path", name], msg: "Input should be a valid UUID", type: "uuid_parsing" }]);
  }
  return id;
}
