import type { FastifySchemaValidationError } from "fastify";
import { ANY_UUID_PATTERN } from "./uuid.js";

/** pydantic's answer for a model (not a map) given a value that is not an object. */
export const NOT_A_MODEL = {
  msg: "Input should be a valid dictionary or object to extract fields from",
  type: "model_attributes_type",
} as const;

/** One entry of an HTTPValidationError (spec 2.6). */
export type ValidationIssue = { loc: Array<string | number>; msg: string; type: string };

type Flat = {
  path: Array<string | number>;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
  /** The failing schema is a model (an object of named properties), not a map (ajv's `verbose`). */
  model: boolean;
};

const decode = (segment: string): string | number =>
  /^\d+$/.test(segment) ? Number(segment) : segment.replace(/~1/g, "/").replace(/~0/g, "~");

function flatten(error: FastifySchemaValidationError): Flat {
  const path = error.instancePath ? error.instancePath.slice(1).split("/").map(decode) : [];
  const params = error.params ?? {};
  if (error.keyword === "required") path.push(String(params.missingProperty));
  if (error.keyword === "additionalProperties") path.push(String(params.additionalProperty));
  const parent = (error as { parentSchema?: { properties?: unknown } }).parentSchema;
  const model = parent?.properties !== undefined;
  return { path, keyword: error.keyword, params, message: error.message ?? "is invalid", model };
}

const key = (path: Array<string | number>) => JSON.stringify(path);
const isWrapper = (e: Flat) => e.keyword === "anyOf" || (e.keyword === "type" && e.params.type === "null");

/**
 * Turns ajv's errors into one pydantic-style issue per offending field. TypeBox's nullable
 * unions make ajv report "must be null" and "anyOf" next to the real error; those are dropped.
 */
export function formatAjvErrors(errors: FastifySchemaValidationError[], context: string): ValidationIssue[] {
  const flat = errors.map(flatten);
  const hasDeeper = (path: Array<string | number>) =>
    flat.some((e) => e.path.length > path.length && key(e.path.slice(0, path.length)) === key(path));
  const groups = new Map<string, Flat[]>();
  for (const error of flat) {
    if ((isWrapper(error) || error.keyword === "const") && hasDeeper(error.path)) continue;
    const k = key(error.path);
    groups.set(k, [...(groups.get(k) ?? []), error]);
  }
  const issues: ValidationIssue[] = [];
  for (const group of groups.values()) {
    const path = group[0]?.path ?? [];
    const loc = [context, ...path];
    const consts = group.filter((e) => e.keyword === "const");
    if (consts.length > 0) {
      const allowed = consts.map((e) => `'${String(e.params.allowedValue)}'`);
      const list =
        allowed.length > 1 ? `${allowed.slice(0, -1).join(", ")} or ${allowed.at(-1)}` : allowed[0];
      issues.push({ loc, msg: `Input should be ${list}`, type: "literal_error" });
      continue;
    }
    const real = group.filter((e) => !isWrapper(e));
    for (const error of real.length > 0 ? real : group.slice(0, 1)) issues.push({ loc, ...describe(error) });
  }
  return dedupe(issues);
}

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ["Input should be a valid string", "string_type"],
  integer: ["Input should be a valid integer", "int_type"],
  number: ["Input should be a valid number", "float_type"],
  boolean: ["Input should be a valid boolean", "bool_type"],
  object: ["Input should be a valid dictionary", "dict_type"],
  array: ["Input should be a valid list", "list_type"],
  null: ["Input should be None", "none_required"],
};

/** `1 character`, `63 characters`: pydantic's words for a length bound. */
export const characters = (limit: unknown) => `${String(limit)} character${Number(limit) === 1 ? "" : "s"}`;

function describe(error: Flat): { msg: string; type: string } {
  const p = error.params;
  switch (error.keyword) {
    case "required":
      return { msg: "Field required", type: "missing" };
    case "additionalProperties":
      return { msg: "Extra inputs are not permitted", type: "extra_forbidden" };
    case "type": {
      // pydantic: a model given something else than an object (FastAPI validates with from_attributes)
      if (p.type === "object" && error.model) return NOT_A_MODEL;
      const [msg, type] = TYPE_NAMES[String(p.type)] ?? [`Input should be ${String(p.type)}`, "type_error"];
      return { msg, type };
    }
    case "minimum":
      return {
        msg: `Input should be greater than or equal to ${String(p.limit)}`,
        type: "greater_than_equal",
      };
    case "exclusiveMinimum":
      return { msg: `Input should be greater than ${String(p.limit)}`, type: "greater_than" };
    case "maximum":
      return { msg: `Input should be less than or equal to ${String(p.limit)}`, type: "less_than_equal" };
    case "exclusiveMaximum":
      return { msg: `Input should be less than ${String(p.limit)}`, type: "less_than" };
    case "pattern":
      // A body's uuid field (pydantic's UUID type): its own error, as for a path id.
      if (p.pattern === ANY_UUID_PATTERN)
        return { msg: "Input should be a valid UUID", type: "uuid_parsing" };
      return { msg: `String should match pattern '${String(p.pattern)}'`, type: "string_pattern_mismatch" };
    case "minLength":
      return { msg: `String should have at least ${characters(p.limit)}`, type: "string_too_short" };
    case "maxLength":
      return { msg: `String should have at most ${characters(p.limit)}`, type: "string_too_long" };
    default:
      return { msg: error.message, type: error.keyword };
  }
}

export function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const k = `${key(issue.loc)}|${issue.type}|${issue.msg}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
