import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { GRAPH_ID } from "./graph.js";
import {
  intQuery,
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "./route-kit.js";
import { RUN_STATUSES, type RunRecord, type ThreadRecord } from "./types.js";
import { parseRunCreate, type ValidationIssue } from "./validation.js";
import { runView, stateValues } from "./views.js";

/** Run routes: create (and wait), list, get, join, cancel, delete. */
export function registerRunRoutes(
  app: FastifyInstance,
  { ctx, store, scheduler }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const { iso, opts, path, newThread, findThread, findRun } = kit;
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
    // A run that failed answers as the open-source server does, so the SDK's runs.wait throws.
    if (run.status === "error" || run.status === "timeout") return { __error__: runError(run) };
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

/** `{error, message}` of a failed run: "GraphError: text" splits into the error's name and message. */
function runError(run: { status: string; error?: string }): { error: string; message: string } {
  const text = run.error ?? (run.status === "timeout" ? "the run timed out" : "the run failed");
  const named = /^([A-Za-z]+Error): (.*)$/s.exec(text);
  if (named) return { error: named[1]!, message: named[2]! };
  return { error: run.status === "timeout" ? "TimeoutError" : "Error", message: text };
}
