import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ControlPlaneContext } from "../context.js";
import { GRAPH_ID } from "./graph.js";
import type { Scheduler } from "./scheduler.js";
import type { ThreadStore } from "./store.js";
import { RUN_STATUSES, type RunRecord, type ThreadRecord } from "./types.js";
import { parseRunCreate, parseThreadCreate, type ValidationIssue } from "./validation.js";
import { runView, stateValues, stateView, threadView } from "./views.js";

export const AGENTS_PREFIX = "/agents/:deploymentId";

type Params = { deploymentId: string; threadId: string; runId: string };
type Route = { Params: Params; Querystring: Record<string, string | undefined> };
type Req = FastifyRequest<Route>;

export type AgentRoutesDeps = { ctx: ControlPlaneContext; store: ThreadStore; scheduler: Scheduler };

const notFound = (reply: FastifyReply, detail: string) => reply.code(404).send({ detail });
const invalid = (reply: FastifyReply, detail: ValidationIssue[]) => reply.code(422).send({ detail });

/** Parses an optional non-negative integer query parameter; pushes an issue when malformed. */
function intQuery(
  query: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  issues: ValidationIssue[],
): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && value >= min && value <= max) return value;
  issues.push({
    loc: ["query", name],
    msg: `Input should be an integer from ${min} to ${max}`,
    type: "int_parsing",
  });
  return fallback;
}

export function registerAgentRoutes(app: FastifyInstance, { ctx, store, scheduler }: AgentRoutesDeps): void {
  const iso = () => new Date(ctx.clock.now()).toISOString();

  // Answers 404 for a deployment the caller's tenant does not own (or that does not exist).
  const deploymentGuard = async (request: FastifyRequest, reply: FastifyReply) => {
    const { deploymentId } = request.params as Params;
    if (!ctx.deploymentExists(ctx.tenantOf(request), deploymentId)) {
      return notFound(reply, `Deployment ID ${deploymentId} not found.`);
    }
  };
  const opts = { preHandler: deploymentGuard };
  const path = (suffix: string) => `${AGENTS_PREFIX}${suffix}`;

  const newThread = (threadId: string, metadata: Record<string, unknown>): ThreadRecord => {
    const now = iso();
    return {
      thread_id: threadId,
      created_at: now,
      updated_at: now,
      state_updated_at: now,
      metadata,
      checkpoint_id: randomUUID(),
      messages: [],
      runs: [],
    };
  };

  const findThread = (request: Req, reply: FastifyReply): ThreadRecord | undefined => {
    const thread = store.get(request.params.deploymentId, request.params.threadId);
    if (thread === undefined) void notFound(reply, `Thread ${request.params.threadId} not found.`);
    return thread;
  };

  const findRun = (request: Req, reply: FastifyReply): [ThreadRecord, RunRecord] | undefined => {
    const thread = findThread(request, reply);
    if (thread === undefined) return undefined;
    const run = thread.runs.find((candidate) => candidate.run_id === request.params.runId);
    if (run === undefined) {
      void notFound(reply, `Run ${request.params.runId} not found on thread ${thread.thread_id}.`);
      return undefined;
    }
    return [thread, run];
  };

  app.get<Route>(path("/ok"), opts, async () => ({ ok: true }));
  app.get<Route>(path("/info"), opts, async (request: Req) => ({
    version: "plumb-simulated-1",
    flags: { assistants: true, crons: false, langsmith: false },
    host: { kind: "plumb-local", deployment_id: request.params.deploymentId },
    graphs: [GRAPH_ID],
  }));

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
    const thread = newThread(requestedId ?? randomUUID(), metadata);
    store.put(deploymentId, thread);
    const view = threadView(thread);
    await ctx.commit();
    return view;
  });

  app.post<Route>(path("/threads/search"), opts, async (request: Req, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    const limit = typeof body.limit === "number" ? body.limit : 10;
    const offset = typeof body.offset === "number" ? body.offset : 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      issues.push({
        loc: ["body", "limit"],
        msg: "Input should be an integer from 1 to 1000",
        type: "int_parsing",
      });
    if (!Number.isInteger(offset) || offset < 0)
      issues.push({
        loc: ["body", "offset"],
        msg: "Input should be a non-negative integer",
        type: "int_parsing",
      });
    if (issues.length > 0) return invalid(reply, issues);
    const metadata =
      typeof body.metadata === "object" && body.metadata !== null
        ? (body.metadata as Record<string, unknown>)
        : {};
    const matches = store
      .list(request.params.deploymentId)
      .filter((thread) =>
        Object.entries(metadata).every(
          ([key, value]) => JSON.stringify(thread.metadata[key]) === JSON.stringify(value),
        ),
      )
      .map(threadView)
      .filter((view) => body.status === undefined || body.status === null || view.status === body.status)
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    return matches.slice(offset, offset + limit);
  });

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
    return reply.code(204).send();
  });

  app.get<Route>(path("/threads/:threadId/state"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    return thread === undefined ? reply : stateView(thread);
  });

  /** Creates a run from the request, or answers the error and returns undefined. */
  const createRun = async (
    request: Req,
    reply: FastifyReply,
    onCreated: (run: RunRecord) => void = () => undefined,
  ): Promise<[ThreadRecord, RunRecord] | undefined> => {
    const parsed = parseRunCreate(request.body);
    if (!parsed.ok) return void invalid(reply, parsed.issues);
    const body = parsed.value;
    const { deploymentId, threadId } = request.params;
    let thread = store.get(deploymentId, threadId);
    if (thread === undefined && body.if_not_exists !== "create")
      return void notFound(reply, `Thread ${threadId} not found.`);
    if (body.assistant_id !== GRAPH_ID) {
      return void notFound(
        reply,
        `Assistant ${body.assistant_id} not found; this deployment serves one graph: use assistant_id "${GRAPH_ID}".`,
      );
    }
    if (thread === undefined) {
      thread = newThread(threadId, {});
      store.put(deploymentId, thread);
    }
    const now = iso();
    const run: RunRecord = {
      run_id: randomUUID(),
      thread_id: thread.thread_id,
      assistant_id: GRAPH_ID,
      status: "pending",
      multitask_strategy: body.multitask_strategy,
      created_at: now,
      updated_at: now,
      metadata: body.metadata,
      input_messages: body.input_messages,
    };
    onCreated(run);
    if (scheduler.submit(thread, run) === "conflict") {
      return void reply.code(409).send({
        detail: `Thread ${thread.thread_id} already has a run in progress; wait for it, or create the run with multitask_strategy "interrupt", "rollback" or "enqueue".`,
      });
    }
    await ctx.commit();
    void reply.header("content-location", `/threads/${thread.thread_id}/runs/${run.run_id}`);
    return [thread, run];
  };

  app.post<Route>(path("/threads/:threadId/runs"), opts, async (request: Req, reply) => {
    // Answers the run as created: it may already be running (or done) once the commit returns.
    let view: ReturnType<typeof runView> | undefined;
    const created = await createRun(request, reply, (run) => (view = runView(run)));
    return created === undefined ? reply : view;
  });

  // Create a run and wait for it: the thread's state values once it ends (SDK runs.wait).
  app.post<Route>(path("/threads/:threadId/runs/wait"), opts, async (request: Req, reply) => {
    const created = await createRun(request, reply);
    if (created === undefined) return reply;
    const [thread, run] = created;
    await scheduler.settled(run);
    return stateValues(thread);
  });

  app.get<Route>(path("/threads/:threadId/runs"), opts, async (request: Req, reply) => {
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    const issues: ValidationIssue[] = [];
    const limit = intQuery(request.query, "limit", 10, 1, 1000, issues);
    const offset = intQuery(request.query, "offset", 0, 0, Number.MAX_SAFE_INTEGER, issues);
    const status = request.query.status;
    if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) {
      issues.push({
        loc: ["query", "status"],
        msg: `Input should be one of ${RUN_STATUSES.join(", ")}`,
        type: "enum",
      });
    }
    if (issues.length > 0) return invalid(reply, issues);
    return [...thread.runs]
      .reverse()
      .filter((run) => status === undefined || run.status === status)
      .slice(offset, offset + limit)
      .map(runView);
  });

  app.get<Route>(path("/threads/:threadId/runs/:runId"), opts, async (request: Req, reply) => {
    const found = findRun(request, reply);
    return found === undefined ? reply : runView(found[1]);
  });

  app.get<Route>(path("/threads/:threadId/runs/:runId/join"), opts, async (request: Req, reply) => {
    const found = findRun(request, reply);
    if (found === undefined) return reply;
    const [thread, run] = found;
    await scheduler.settled(run);
    if (!thread.runs.includes(run) || store.get(request.params.deploymentId, thread.thread_id) !== thread) {
      return notFound(
        reply,
        `Run ${run.run_id} no longer exists: it was rolled back or its thread was deleted.`,
      );
    }
    return stateValues(thread);
  });

  app.post<Route>(path("/threads/:threadId/runs/:runId/cancel"), opts, async (request: Req, reply) => {
    const action = request.query.action ?? "interrupt";
    if (action !== "interrupt" && action !== "rollback") {
      return invalid(reply, [
        { loc: ["query", "action"], msg: "Input should be 'interrupt' or 'rollback'", type: "enum" },
      ]);
    }
    const found = findRun(request, reply);
    if (found === undefined) return reply;
    const [thread, run] = found;
    if (run.status !== "pending" && run.status !== "running") {
      return reply.code(409).send({
        detail: `Run ${run.run_id} has already ended (${run.status}); only pending or running runs can be cancelled.`,
      });
    }
    scheduler.cancel(thread, run, action);
    await ctx.commit();
    const wait = request.query.wait === "1" || request.query.wait === "true";
    return reply.code(wait ? 204 : 202).send();
  });

  app.delete<Route>(path("/threads/:threadId/runs/:runId"), opts, async (request: Req, reply) => {
    const found = findRun(request, reply);
    if (found === undefined) return reply;
    const [thread, run] = found;
    if (run.status === "pending" || run.status === "running") {
      return reply
        .code(409)
        .send({ detail: `Run ${run.run_id} is ${run.status}; cancel it before deleting it.` });
    }
    thread.runs = thread.runs.filter((other) => other !== run);
    thread.updated_at = iso();
    await ctx.commit();
    return reply.code(204).send();
  });
}
