import type { FastifyInstance } from "fastify";
import { createRunCreator } from "./run-create.js";
import {
  intQuery,
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { RUN_STATUSES } from "../types.js";
import { parseRunCreate, type ValidationIssue } from "../validation.js";
import { outputValues, runError, runView } from "../views.js";

/** Run routes: create (and wait; on a thread, stateless, in a batch), list, get, join, cancel, delete. */
export function registerRunRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  registerRunCreateRoutes(app, deps, kit);
  registerRunReadRoutes(app, deps, kit);
  registerRunEndRoutes(app, deps, kit);
}

/** Create a run: on a thread, stateless, waiting for it, or several at once. */
function registerRunCreateRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  const { ctx, scheduler } = deps;
  const { opts, path } = kit;
  const createRun = createRunCreator(deps, kit);

  // On a thread and stateless (a temporary thread): the run as created, which may already be
  // running (or done) once the commit returns.
  for (const prefix of ["/threads/:threadId", ""]) {
    app.post<Route>(path(`${prefix}/runs`), opts, async (request: Req, reply) => {
      let view: ReturnType<typeof runView> | undefined;
      const created = await createRun(request.params, request.body, reply, (run) => (view = runView(run)));
      return created === undefined ? reply : view;
    });

    // Create a run and wait for it: the thread's state values once it ends (SDK runs.wait).
    app.post<Route>(path(`${prefix}/runs/wait`), opts, async (request: Req, reply) => {
      const created = await createRun(request.params, request.body, reply);
      if (created === undefined) return reply;
      const { thread, run } = created;
      await scheduler.settled(run);
      // A run that failed answers as the open-source server does, so the SDK's runs.wait throws.
      if (run.status === "error" || run.status === "timeout") return { __error__: runError(run) };
      return outputValues(thread);
    });
  }

  // Several stateless runs at once (SDK runs.createBatch): every body is checked before any starts.
  app.post<Route>(path("/runs/batch"), opts, async (request: Req, reply) => {
    const bodies = request.body;
    if (!Array.isArray(bodies) || bodies.length === 0)
      return invalid(reply, [{ loc: ["body"], msg: "Input should be a non-empty list", type: "list_type" }]);
    const issues = bodies.flatMap((body: unknown, index) => {
      const parsed = parseRunCreate(body, ctx.webhookAllowHosts);
      return parsed.ok
        ? []
        : parsed.issues.map((issue) => ({ ...issue, loc: ["body", index, ...issue.loc.slice(1)] }));
    });
    if (issues.length > 0) return invalid(reply, issues);
    const views: Array<ReturnType<typeof runView>> = [];
    for (const body of bodies as unknown[]) {
      const created = await createRun(request.params, body, reply, (run) => views.push(runView(run)));
      if (created === undefined) return reply;
    }
    reply.removeHeader("content-location");
    return views;
  });
}

/** A thread's runs, one run, and joining one (waiting for its end). */
function registerRunReadRoutes(
  app: FastifyInstance,
  { store, scheduler }: AgentRoutesDeps,
  { opts, path, findThread, findRun }: RouteKit,
): void {
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
    // A failed run answers as runs.wait does, so the SDK's runs.join shows the error.
    if (run.status === "error" || run.status === "timeout") return { __error__: runError(run) };
    return outputValues(thread);
  });
}

/** Cancel a pending or running run; delete an ended one. */
function registerRunEndRoutes(
  app: FastifyInstance,
  { ctx, scheduler }: AgentRoutesDeps,
  { iso, opts, path, findRun }: RouteKit,
): void {
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
