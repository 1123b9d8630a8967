import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { RouteFlags } from "../../http/request-guards.js";
import { GRAPH_ID } from "../graph.js";
import { applyStateUpdate, parseSupersteps } from "./state-update.js";
import { invalid, type AgentRoutesDeps, type Req, type Route, type RouteKit } from "../route-kit.js";
import { sameId } from "../../http/uuid.js";
import { limitParam, parseThreadCreate, type ValidationIssue } from "../validation.js";
import { checkpointView, stateView, threadView } from "../views.js";

/** A state update needs the thread's graph: set by its first run, or by graph_id on create. */
export const noGraph = (threadId: string) =>
  `Thread ${threadId} has no graph ID: run it first, or create it with metadata.graph_id "agent" (SDK threads.create({graphId: "agent"})).`;

const isPlainObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/** Health, info and thread routes of the simulated agent server: create, search, get, patch, copy, delete, state, history. */
export function registerThreadRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  registerHealthRoutes(app, kit);
  registerThreadCreate(app, deps, kit);
  registerThreadItemRoutes(app, deps, kit);
  registerThreadHistory(app, kit);
  registerThreadChangeRoutes(app, deps, kit);
}

function registerHealthRoutes(app: FastifyInstance, { opts, path }: RouteKit): void {
  // Health and metadata: not API calls a client retries, so --faults leaves them alone.
  const checks = { ...opts, config: { faults: false } satisfies RouteFlags };
  app.get<Route>(path("/ok"), checks, async () => ({ ok: true }));
  app.get<Route>(path("/info"), checks, async (request: Req) => ({
    version: "plumb-simulated-1",
    flags: { assistants: true, crons: true, langsmith: false },
    host: { kind: "plumb-local", deployment_id: request.params.deploymentId },
    graphs: [GRAPH_ID],
  }));
}

function registerThreadCreate(
  app: FastifyInstance,
  { ctx, store }: AgentRoutesDeps,
  { opts, path, newThread, iso }: RouteKit,
): void {
  app.post<Route>(path("/threads"), opts, async (request: Req, reply) => {
    const parsed = parseThreadCreate(request.body);
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const { deploymentId } = request.params;
    const { thread_id: requestedId, metadata, if_exists: ifExists } = parsed.value;
    const existing = requestedId === null ? undefined : store.get(deploymentId, requestedId);
    if (existing !== undefined) {
      if (ifExists === "do_nothing") return threadView(existing);
      return reply.code(409).send({
        detail: `Thread ${existing.thread_id} already exists; send if_exists "do_nothing" to reuse it.`,
      });
    }
    const supersteps = parseSupersteps((request.body as { supersteps?: unknown } | null)?.supersteps);
    if (!supersteps.ok) return invalid(reply, supersteps.issues);
    if (supersteps.value.length > 0 && metadata.graph_id == null)
      return reply.code(400).send({ detail: noGraph(requestedId ?? "(new)") });
    const thread = newThread(requestedId ?? randomUUID(), metadata);
    // A thread created with its past: each update is a checkpoint, as threads.updateState makes.
    for (const update of supersteps.value) applyStateUpdate(thread, update, iso());
    store.put(deploymentId, thread);
    const view = threadView(thread);
    await ctx.commit();
    return view;
  });
}

/** One thread: read, delete (with its runs and streams), its state. */
function registerThreadItemRoutes(
  app: FastifyInstance,
  { ctx, store, scheduler, threadEvents }: AgentRoutesDeps,
  { opts, path, findThread }: RouteKit,
): void {
  app.get<Route>(path("/threads/:threadId"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    return thread === undefined ? reply : threadView(thread);
  });

  app.delete<Route>(path("/threads/:threadId"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    scheduler.discard(thread);
    store.delete(request.params.deploymentId, thread.thread_id);
    await ctx.commit();
    threadEvents.forget(request.params.deploymentId, thread.thread_id);
    return reply.code(204).send();
  });

  app.get<Route>(path("/threads/:threadId/state"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    return thread === undefined ? reply : stateView(thread);
  });
}

function registerThreadHistory(app: FastifyInstance, { opts, path, findThread }: RouteKit): void {
  // Past states, newest first: `limit` (default 10) and `before` a checkpoint id.
  app.post<Route>(path("/threads/:threadId/history"), opts, async (request: Req, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    if (!isPlainObject(body))
      issues.push({ loc: ["body"], msg: "Input should be a valid dictionary", type: "dict_type" });
    const limit = limitParam(body, 10, issues);
    // A checkpoint id, a checkpoint, or a config (`{configurable: {checkpoint_id}}`, as the SDK sends it).
    type Before = { checkpoint_id?: unknown; configurable?: { checkpoint_id?: unknown } };
    const before = body.before as Before | string | null | undefined;
    const beforeId =
      typeof before === "string" ? before : (before?.checkpoint_id ?? before?.configurable?.checkpoint_id);
    if (beforeId !== undefined && beforeId !== null && typeof beforeId !== "string")
      issues.push({ loc: ["body", "before"], msg: "Input should be a checkpoint id", type: "string_type" });
    if (issues.length > 0) return invalid(reply, issues);
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    const all = thread.history ?? [];
    const end =
      typeof beforeId === "string" ? all.findIndex((c) => c.checkpoint_id === sameId(beforeId)) : all.length;
    const filter = isPlainObject(body.metadata) ? (body.metadata as Record<string, unknown>) : {};
    return all
      .slice(0, end === -1 ? 0 : end)
      .reverse()
      .map((checkpoint) => checkpointView(thread, checkpoint))
      .filter((view) =>
        Object.entries(filter).every(
          ([key, value]) =>
            JSON.stringify((view.metadata as Record<string, unknown>)[key]) === JSON.stringify(value),
        ),
      )
      .slice(0, limit);
  });
}

/** Metadata merged in (PATCH) and a copy of the thread. */
function registerThreadChangeRoutes(
  app: FastifyInstance,
  { ctx, store }: AgentRoutesDeps,
  { opts, path, newThread, findThread, iso }: RouteKit,
): void {
  // Metadata is merged into the thread's (SDK threads.update).
  app.patch<Route>(path("/threads/:threadId"), opts, async (request: Req, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (
      !isPlainObject(body) ||
      (body.metadata !== undefined && body.metadata !== null && !isPlainObject(body.metadata))
    )
      return invalid(reply, [
        { loc: ["body", "metadata"], msg: "Input should be a valid dictionary", type: "dict_type" },
      ]);
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    thread.metadata = { ...thread.metadata, ...((body.metadata ?? {}) as Record<string, unknown>) };
    thread.updated_at = iso();
    await ctx.commit();
    return threadView(thread);
  });

  // A new thread with the same state, metadata and history, and no runs (SDK threads.copy).
  app.post<Route>(path("/threads/:threadId/copy"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    const copy = newThread(randomUUID(), structuredClone(thread.metadata));
    copy.messages = structuredClone(thread.messages);
    copy.history = structuredClone(thread.history ?? []);
    copy.checkpoint_id = thread.checkpoint_id;
    store.put(request.params.deploymentId, copy);
    await ctx.commit();
    return threadView(copy);
  });
}
