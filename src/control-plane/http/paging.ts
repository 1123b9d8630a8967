import { unprocessable } from "./http-errors.js";
import { canonicalUuid } from "./uuid.js";

type Issue = { loc: Array<string | number>; msg: string; type: string };

/**
 * The parameter's value (the fallback when absent), or the issue FastAPI would report for it: the
 * control plane's and the agent server's integer query parameters (agent-server/route-kit.ts).
 */
export function queryInteger(
  query: Record<string, unknown>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number | Issue {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const last: unknown = Array.isArray(raw) ? raw.at(-1) : raw;
  const value = typeof last === "string" ? laxInteger(last) : undefined;
  const loc = ["query", name];
  if (value === undefined)
    return {
      loc,
      msg: "Input should be a valid integer, unable to parse string as an integer",
      type: "int_parsing",
    };
  if (value < min)
    return { loc, msg: `Input should be greater than or equal to ${min}`, type: "greater_than_equal" };
  if (value > max)
    return { loc, msg: `Input should be less than or equal to ${max}`, type: "less_than_equal" };
  return value;
}

/**
 * An integer query value as FastAPI's int parameters read it (pydantic's lax str → int): digits
 * with an optional sign, then either an all-zero fraction (`5.0`, `5.`) or Python's underscores
 * between digits (`1_000`); undefined for anything else (`5.5`, `1e2`, `0x10`, a space).
 */
function laxInteger(text: string): number | undefined {
  if (/^[+-]?\d+$/.test(text)) return Number(text);
  const fraction = /^([+-]?\d+)\.0*$/.exec(text);
  if (fraction) return Number(fraction[1]);
  if (/^[+-]?\d+(?:_\d+)+$/.test(text)) return Number(text.replaceAll("_", ""));
  return undefined;
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

/**
 * `limit` 1..100 (default 20) and `offset` ≥ 0 (default 0), as the public API pages lists; with
 * the issues of both (FastAPI reports every parameter's in one answer).
 */
export function readPaging(query: unknown): { paging: { limit: number; offset: number }; issues: Issue[] } {
  const q = (query ?? {}) as Record<string, unknown>;
  const limit = queryInteger(q, "limit", 20, 1, 100);
  const offset = queryInteger(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER);
  const issues = [limit, offset].filter((v): v is Issue => typeof v !== "number");
  const paging = {
    limit: typeof limit === "number" ? limit : 20,
    offset: typeof offset === "number" ? offset : 0,
  };
  return { paging, issues };
}

/** readPaging's paging, or 422 with its issues. */
export function parsePaging(query: unknown): { limit: number; offset: number } {
  const { paging, issues } = readPaging(query);
  if (issues.length > 0) throw unprocessable(issues);
  return paging;
}

export function page<T>(items: T[], paging: { limit: number; offset: number }) {
  const resources = items.slice(paging.offset, paging.offset + paging.limit);
  return { resources, offset: paging.offset + resources.length };
}

/** The issue of each named path parameter that is not a uuid (as the public API's typed ones). */
export function uuidIssues(params: unknown, names: readonly string[]): Issue[] {
  const values = (params ?? {}) as Record<string, unknown>;
  return names.flatMap((name) => {
    const value = values[name];
    return typeof value === "string" && canonicalUuid(value) !== undefined
      ? []
      : [{ loc: ["path", name], msg: "Input should be a valid UUID", type: "uuid_parsing" }];
  });
}

/** Path ids must be uuids (422 otherwise, as the public API's typed path parameters). */
export function requireUuid(value: string, name: string): string {
  const id = canonicalUuid(value);
  if (id === undefined) {
    throw unprocessable([{ loc: ["path", name], msg: "Input should be a valid UUID", type: "uuid_parsing" }]);
  }
  return id;
}
