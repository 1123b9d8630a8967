import { bodyUuid } from "../../http/uuid.js";
import {
  dictIssue,
  isObject,
  optionalEnum,
  optionalMetadata,
  type Parsed,
  type ValidationIssue,
} from "../validation.js";
import { parseSelect } from "../select.js";

/** Bodies of the assistant routes; fields the simulation does not use are accepted and ignored. */

export type AssistantCreateBody = {
  graph_id: string;
  assistant_id: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  if_exists: "raise" | "do_nothing";
  name: string | null;
  description: string | null;
};

export type AssistantPatchBody = Partial<Omit<AssistantCreateBody, "assistant_id" | "if_exists">>;

export type AssistantSearchBody = {
  graph_id: string | undefined;
  name: string | undefined;
  metadata: Record<string, unknown>;
  limit: number;
  offset: number;
  sort_by: "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
  sort_order: "asc" | "desc";
  select: string[] | undefined;
};

const bodyOf = (body: unknown, issues: ValidationIssue[]): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (isObject(body)) return body;
  issues.push(dictIssue(["body"]));
  return {};
};

function optionalDict(body: Record<string, unknown>, field: string, issues: ValidationIssue[]) {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) return value;
  issues.push(dictIssue(["body", field]));
  return undefined;
}

function optionalString(body: Record<string, unknown>, field: string, issues: ValidationIssue[]) {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  issues.push({ loc: ["body", field], msg: "Input should be a valid string", type: "string_type" });
  return undefined;
}

function optionalInt(
  body: Record<string, unknown>,
  field: string,
  fallback: number,
  min: number,
  max: number,
  issues: ValidationIssue[],
) {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value;
  issues.push({
    loc: ["body", field],
    msg: `Input should be an integer from ${min} to ${max}`,
    type: "int_parsing",
  });
  return fallback;
}

export function parseAssistantCreate(raw: unknown): Parsed<AssistantCreateBody> {
  const issues: ValidationIssue[] = [];
  const body = bodyOf(raw, issues);
  const graphId = optionalString(body, "graph_id", issues);
  if (graphId === undefined && (body.graph_id === undefined || body.graph_id === null))
    issues.push({ loc: ["body", "graph_id"], msg: "Field required", type: "missing" });
  const assistantId = bodyUuid(body.assistant_id, ["body", "assistant_id"], issues);
  const value = {
    graph_id: graphId ?? "",
    assistant_id: assistantId,
    config: optionalDict(body, "config", issues) ?? {},
    context: optionalDict(body, "context", issues) ?? {},
    metadata: optionalMetadata(body, issues),
    if_exists: optionalEnum(body, "if_exists", ["raise", "do_nothing"] as const, "raise", issues),
    name: optionalString(body, "name", issues) ?? null,
    description: optionalString(body, "description", issues) ?? null,
  };
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}

export function parseAssistantPatch(raw: unknown): Parsed<AssistantPatchBody> {
  const issues: ValidationIssue[] = [];
  const body = bodyOf(raw, issues);
  const value: AssistantPatchBody = {
    graph_id: optionalString(body, "graph_id", issues),
    config: optionalDict(body, "config", issues),
    context: optionalDict(body, "context", issues),
    metadata: optionalMetadata(body, issues),
    name: optionalString(body, "name", issues),
    description: optionalString(body, "description", issues),
  };
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}

const SORT_FIELDS = ["assistant_id", "graph_id", "name", "created_at", "updated_at"] as const;
const ASSISTANT_FIELDS = [...SORT_FIELDS, "description", "config", "context", "metadata", "version"];

export function parseAssistantSearch(raw: unknown): Parsed<AssistantSearchBody> {
  const issues: ValidationIssue[] = [];
  const body = bodyOf(raw, issues);
  const value: AssistantSearchBody = {
    graph_id: optionalString(body, "graph_id", issues),
    name: optionalString(body, "name", issues),
    metadata: optionalMetadata(body, issues),
    limit: optionalInt(body, "limit", 10, 1, 1000, issues),
    offset: optionalInt(body, "offset", 0, 0, Number.MAX_SAFE_INTEGER, issues),
    sort_by: optionalEnum(body, "sort_by", SORT_FIELDS, "created_at", issues),
    sort_order: optionalEnum(body, "sort_order", ["asc", "desc"] as const, "desc", issues),
    select: parseSelect(body.select, ASSISTANT_FIELDS, issues),
  };
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}
