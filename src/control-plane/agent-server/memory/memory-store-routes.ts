import type { FastifyInstance } from "fastify";
import { STORE_LIMITS, type StoreItem } from "./memory-store.js";
import { parseItemRef, parseNamespaceSearch, parsePut, parseSearch } from "./memory-store-validation.js";
import { invalid, type AgentRoutesDeps, type Req, type Route, type RouteKit } from "../route-kit.js";
import { isObject } from "../validation.js";

/**
 * The store routes (docs/control-plane.md "Store"): put, get, delete an item; search items under
 * a namespace prefix with a filter on their value; list namespaces.
 */
export function registerStoreRoutes(
  app: FastifyInstance,
  { ctx, items }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const { opts, path } = kit;
  const view = (item: StoreItem) => structuredClone(item);

  app.put<Route>(path("/store/items"), opts, async (request: Req, reply) => {
    const parsed = parsePut(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    if (items.put(request.params.deploymentId, { ...parsed.value, updated_at: kit.iso() }) === "full")
      return reply.code(409).send({
        detail: `The store of this deployment holds ${STORE_LIMITS.itemsPerDeployment} items, the most it may; delete items before adding more.`,
      });
    await ctx.commit();
    return reply.code(204).send();
  });

  // A missing item answers null, as the open-source server does (the SDK's getItem returns null).
  app.get<Route>(path("/store/items"), opts, async (request: Req, reply) => {
    const ref = parseItemRef(request.query.namespace, request.query.key, "query");
    if (!ref.ok) return invalid(reply, ref.issues);
    const item = items.get(request.params.deploymentId, ref.value.namespace, ref.value.key);
    return reply.type("application/json").send(JSON.stringify(item === undefined ? null : view(item)));
  });

  app.delete<Route>(path("/store/items"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const ref = parseItemRef(body.namespace, body.key, "body");
    if (!ref.ok) return invalid(reply, ref.issues);
    items.delete(request.params.deploymentId, ref.value.namespace, ref.value.key);
    await ctx.commit();
    return reply.code(204).send();
  });

  app.post<Route>(path("/store/items/search"), opts, async (request: Req, reply) => {
    const parsed = parseSearch(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const { prefix, filter, limit, offset } = parsed.value;
    const found = items
      .list(request.params.deploymentId)
      .filter((item) => startsWith(item.namespace, prefix))
      .filter((item) => Object.entries(filter).every(([field, test]) => matches(item.value[field], test)))
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    return { items: found.slice(offset, offset + limit).map((item) => ({ ...view(item), score: null })) };
  });

  app.post<Route>(path("/store/namespaces"), opts, async (request: Req, reply) => {
    const parsed = parseNamespaceSearch(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const { prefix, suffix, maxDepth, limit, offset } = parsed.value;
    const seen = new Map<string, string[]>();
    for (const item of items.list(request.params.deploymentId)) {
      const { namespace } = item;
      if (!startsWith(namespace, prefix) || !startsWith([...namespace].reverse(), [...suffix].reverse()))
        continue;
      const shown = maxDepth === undefined ? namespace : namespace.slice(0, maxDepth);
      seen.set(shown.join("."), shown);
    }
    const namespaces = [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, labels]) => labels);
    return { namespaces: namespaces.slice(offset, offset + limit) };
  });
}

const startsWith = (labels: readonly string[], prefix: readonly string[]) =>
  prefix.length <= labels.length && prefix.every((label, i) => labels[i] === label);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A filter entry: a value to equal, or `{$eq|$ne|$gt|$gte|$lt|$lte: value}` as LangGraph's stores take. */
function matches(actual: unknown, test: unknown): boolean {
  if (!isObject(test) || !Object.keys(test).every((op) => op.startsWith("$"))) return same(actual, test);
  return Object.entries(test).every(([op, expected]) => {
    if (op === "$eq") return same(actual, expected);
    if (op === "$ne") return !same(actual, expected);
    const comparable =
      (typeof actual === "number" && typeof expected === "number") ||
      (typeof actual === "string" && typeof expected === "string");
    if (!comparable) return false;
    const [a, e] = [actual, expected] as [number | string, number | string];
    if (op === "$gt") return a > e;
    if (op === "$gte") return a >= e;
    if (op === "$lt") return a < e;
    if (op === "$lte") return a <= e;
    return false;
  });
}
