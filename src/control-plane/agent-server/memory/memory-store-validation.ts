import { STORE_LIMITS, type StoreItem } from "./memory-store.js";
import { isObject, pageParams, type Parsed, type ValidationIssue } from "../validation.js";

/** Bodies and query strings of the store routes, with the limits of STORE_LIMITS. */

type Loc = ValidationIssue["loc"];

function parseNamespace(raw: unknown, loc: Loc, issues: ValidationIssue[], allowEmpty = false) {
  const { labels, labelChars } = STORE_LIMITS;
  if (
    Array.isArray(raw) &&
    (allowEmpty || raw.length > 0) &&
    raw.length <= labels &&
    raw.every((l) => typeof l === "string" && l.length > 0 && l.length <= labelChars && !l.includes("."))
  )
    return raw as string[];
  issues.push({
    loc,
    msg: `Input should be a list of up to ${labels} labels of 1 to ${labelChars} characters without "."`,
    type: "list_type",
  });
  return [];
}

function parseKey(raw: unknown, loc: Loc, issues: ValidationIssue[]): string {
  if (typeof raw === "string" && raw.length > 0 && raw.length <= STORE_LIMITS.keyChars) return raw;
  issues.push({
    loc,
    msg: `Input should be a string of 1 to ${STORE_LIMITS.keyChars} characters`,
    type: "string_type",
  });
  return "";
}

const done = <T>(issues: ValidationIssue[], value: T): Parsed<T> =>
  issues.length > 0 ? { ok: false, issues } : { ok: true, value };

export function parsePut(raw: unknown): Parsed<Pick<StoreItem, "namespace" | "key" | "value">> {
  const issues: ValidationIssue[] = [];
  const body = isObject(raw) ? raw : {};
  const namespace = parseNamespace(body.namespace, ["body", "namespace"], issues);
  const key = parseKey(body.key, ["body", "key"], issues);
  const value = isObject(body.value) ? body.value : {};
  if (!isObject(body.value))
    issues.push({ loc: ["body", "value"], msg: "Input should be a valid dictionary", type: "dict_type" });
  else if (Buffer.byteLength(JSON.stringify(value)) > STORE_LIMITS.valueBytes)
    issues.push({
      loc: ["body", "value"],
      msg: `The value should be at most ${STORE_LIMITS.valueBytes / 1024} KiB of JSON; store large data elsewhere and keep a reference`,
      type: "too_long",
    });
  return done(issues, { namespace, key, value });
}

/** `?namespace=a.b&key=k` (GET) or `{namespace, key}` (DELETE). */
export function parseItemRef(namespace: unknown, key: unknown, where: "query" | "body") {
  const issues: ValidationIssue[] = [];
  const labels = where === "query" && typeof namespace === "string" ? namespace.split(".") : namespace;
  const value = {
    namespace: parseNamespace(labels, [where, "namespace"], issues),
    key: parseKey(key, [where, "key"], issues),
  };
  return done(issues, value);
}

export type ItemSearch = {
  prefix: string[];
  filter: Record<string, unknown>;
  limit: number;
  offset: number;
};

export function parseSearch(raw: unknown): Parsed<ItemSearch> {
  const issues: ValidationIssue[] = [];
  const body = isObject(raw) ? raw : {};
  const prefix = parseNamespace(body.namespace_prefix ?? [], ["body", "namespace_prefix"], issues, true);
  const filter = body.filter ?? {};
  if (!isObject(filter))
    issues.push({ loc: ["body", "filter"], msg: "Input should be a valid dictionary", type: "dict_type" });
  return done(issues, { prefix, filter: isObject(filter) ? filter : {}, ...pageParams(body, 10, issues) });
}

export type NamespaceSearch = {
  prefix: string[];
  suffix: string[];
  maxDepth: number | undefined;
  limit: number;
  offset: number;
};

export function parseNamespaceSearch(raw: unknown): Parsed<NamespaceSearch> {
  const issues: ValidationIssue[] = [];
  const body = isObject(raw) ? raw : {};
  const prefix = parseNamespace(body.prefix ?? [], ["body", "prefix"], issues, true);
  const suffix = parseNamespace(body.suffix ?? [], ["body", "suffix"], issues, true);
  const depth = body.max_depth;
  if (
    depth !== undefined &&
    depth !== null &&
    (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1)
  )
    issues.push({
      loc: ["body", "max_depth"],
      msg: "Input should be a positive integer",
      type: "int_parsing",
    });
  const maxDepth = typeof depth === "number" ? depth : undefined;
  return done(issues, { prefix, suffix, maxDepth, ...pageParams(body, 100, issues) });
}
