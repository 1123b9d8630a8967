import type { FastifyInstance } from "fastify";
import { invalid, type AgentRoutesDeps, type Req, type Route, type RouteKit } from "../route-kit.js";
import { parseSelect, pick } from "../select.js";
import { canonicalUuid } from "../../http/uuid.js";
import { isObject, optionalEnum, pageParams, type ValidationIssue } from "../validation.js";
import { threadView } from "../views.js";

/**
 * Thread search and count (SDK threads.search / threads.count): filters on metadata, state
 * values, status and ids; search sorts by `sort_by` (default created_at) in `sort_order`
 * (default desc), pages with limit/offset and answers the `select`ed fields.
 */

const STATUSES = ["idle", "busy", "interrupted", "error"];
const SORT_FIELDS = ["thread_id", "status", "created_at", "updated_at", "state_updated_at"] as const;
const FIELDS = [...SORT_FIELDS, "metadata", "values", "interrupts", "config", "context"];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function parseFilters(body: Record<string, unknown>, issues: ValidationIssue[]) {
  const dict = (field: string) => {
    const value = body[field] ?? {};
    if (isObject(value)) return value;
    issues.push({ loc: ["body", field], msg: "Input should be a valid dictionary", type: "dict_type" });
    return {};
  };
  const status = body.status ?? undefined;
  if (status !== undefined && !STATUSES.includes(status as string))
    issues.push({
      loc: ["body", "status"],
      msg: `Input should be ${STATUSES.map((s) => `'${s}'`).join(", ")}`,
      type: "enum",
    });
  const ids = body.ids ?? undefined;
  if (
    ids !== undefined &&
    !(Array.isArray(ids) && ids.every((id) => typeof id === "string" && canonicalUuid(id) !== undefined))
  )
    issues.push({ loc: ["body", "ids"], msg: "Input should be a list of thread ids", type: "list_type" });
  return {
    metadata: dict("metadata"),
    values: dict("values"),
    status: status as string | undefined,
    // every spelling of a uuid, as a body's thread_id (docs/control-plane.md "Ids")
    ids: Array.isArray(ids) ? new Set(ids.map((id) => canonicalUuid(String(id)) ?? String(id))) : undefined,
  };
}

export function registerThreadSearchRoutes(
  app: FastifyInstance,
  { store }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const { opts, path } = kit;

  const matching = (request: Req, filters: ReturnType<typeof parseFilters>) =>
    store
      .list(request.params.deploymentId)
      .filter((thread) => filters.ids === undefined || filters.ids.has(thread.thread_id))
      .filter((thread) => Object.entries(filters.metadata).every(([k, v]) => same(thread.metadata[k], v)))
      .map(threadView)
      .filter((view) =>
        Object.entries(filters.values).every(([k, v]) =>
          same((view.values as Record<string, unknown>)[k], v),
        ),
      )
      .filter((view) => filters.status === undefined || view.status === filters.status);

  app.post<Route>(path("/threads/search"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const issues: ValidationIssue[] = [];
    const filters = parseFilters(body, issues);
    const { limit, offset } = pageParams(body, 10, issues);
    const sortBy = optionalEnum(body, "sort_by", SORT_FIELDS, "created_at", issues);
    const order =
      optionalEnum(body, "sort_order", ["asc", "desc"] as const, "desc", issues) === "asc" ? 1 : -1;
    const select = parseSelect(body.select, FIELDS, issues);
    if (issues.length > 0) return invalid(reply, issues);
    // Ties (threads created in the same millisecond) keep creation order, reversed for desc.
    return matching(request, filters)
      .map((view, index) => ({ view, index }))
      .sort(
        (a, b) => (String(a.view[sortBy]).localeCompare(String(b.view[sortBy])) || a.index - b.index) * order,
      )
      .slice(offset, offset + limit)
      .map(({ view }) => pick(view, select));
  });

  app.post<Route>(path("/threads/count"), opts, async (request: Req, reply) => {
    const issues: ValidationIssue[] = [];
    const filters = parseFilters(isObject(request.body) ? request.body : {}, issues);
    if (issues.length > 0) return invalid(reply, issues);
    return matching(request, filters).length;
  });
}
