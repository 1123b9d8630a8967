import type { FastifyInstance, FastifyReply } from "fastify";
import { createRunCreator, runPath } from "../runs/run-create.js";
import {
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { writeRunStream } from "./sse.js";
import { emitRunEnded } from "./stream-events.js";
import type { RunEvents } from "../runs/run-events.js";
import { isInProgress, type RunRecord, type ThreadRecord } from "../types.js";
import { parseStreamModes, type StreamMode, type ValidationIssue } from "../validation.js";

/**
 * Streaming routes (docs/control-plane.md "Streaming"): create a run and stream it, on a thread
 * or stateless, and join the stream of an existing run, resuming after `Last-Event-ID`.
 */
export function registerStreamRoutes(app: FastifyInstance, deps: AgentRoutesDeps, kit: RouteKit): void {
  const { opts, path } = kit;
  const createRun = createRunCreator(deps, kit);
  for (const prefix of ["/threads/:threadId", ""]) {
    app.post<Route>(path(`${prefix}/runs/stream`), opts, async (request: Req, reply) => {
      const created = await createRun(request.params, request.body, reply);
      if (created === undefined) return reply;
      const { thread, run, body } = created;
      return streamRun(
        deps,
        reply,
        { thread, run, stateless: prefix === "" },
        { modes: body.stream_mode, after: 0, cancelOnDisconnect: body.on_disconnect === "cancel" },
      );
    });
  }
  registerThreadJoin(app, deps, kit);
  registerStatelessJoin(app, deps, kit);
}

type StreamTarget = { thread: ThreadRecord; run: RunRecord; stateless: boolean };
type StreamConnection = {
  modes: readonly StreamMode[] | undefined;
  after: number;
  cancelOnDisconnect: boolean;
};

/** Streams the run's log on the reply; a disconnect cancels the run when the connection asks. */
function streamRun(
  { ctx, scheduler, events, openStreams }: AgentRoutesDeps,
  reply: FastifyReply,
  target: StreamTarget,
  connection: StreamConnection,
) {
  const { thread, run } = target;
  const cancelIfRunning = () => {
    if (!isInProgress(run)) return;
    scheduler.cancel(thread, run, "interrupt");
    void ctx.commit().catch(() => undefined);
  };
  const runAt = runPath(target);
  writeRunStream(reply, events, openStreams, {
    runId: run.run_id,
    modes: connection.modes,
    after: connection.after,
    heartbeatMs: ctx.streamHeartbeatSeconds * 1000,
    runPath: runAt,
    joinPath: `${runAt}/stream`,
    onDisconnect: () => (connection.cancelOnDisconnect ? cancelIfRunning() : undefined),
  });
  return reply;
}

/** Modes, resume point and disconnect behaviour of a join; undefined after answering 422. */
function joinOptions(request: Req, reply: FastifyReply): StreamConnection | undefined {
  const issues: ValidationIssue[] = [];
  const modes = parseStreamModes(request.query.stream_mode, ["query", "stream_mode"], issues);
  const cancel = request.query.cancel_on_disconnect ?? "0";
  if (!["0", "1", "true", "false"].includes(cancel))
    issues.push({
      loc: ["query", "cancel_on_disconnect"],
      msg: "Input should be a valid boolean",
      type: "bool_parsing",
    });
  if (issues.length > 0) return void invalid(reply, issues);
  const lastEventId = Number(request.headers["last-event-id"] ?? 0);
  return {
    modes: modes !== undefined && modes.length > 0 ? modes : undefined,
    after: Number.isInteger(lastEventId) && lastEventId > 0 ? lastEventId : 0,
    cancelOnDisconnect: cancel === "1" || cancel === "true",
  };
}

/** A join without stream_mode gets the run's own modes (["values"] when it named none). */
function ownModes(run: RunRecord): readonly StreamMode[] | undefined {
  if (run.kwargs === undefined) return undefined; // a record from before kwargs: every mode
  const modes = parseStreamModes(run.kwargs.stream_mode, [], []);
  return modes !== undefined && modes.length > 0 ? modes : ["values"];
}

// A run whose log is gone (ended long ago, or before a restart) still answers its outcome.
function ensureLog(events: RunEvents, deploymentId: string, thread: ThreadRecord, run: RunRecord): void {
  if (events.get(run.run_id) !== undefined) return;
  events.open(deploymentId, thread.thread_id, run.run_id, 1);
  if (!isInProgress(run)) emitRunEnded(events, thread, run);
}

function registerThreadJoin(
  app: FastifyInstance,
  deps: AgentRoutesDeps,
  { opts, path, findRun }: RouteKit,
): void {
  const { events } = deps;
  app.get<Route>(path("/threads/:threadId/runs/:runId/stream"), opts, async (request: Req, reply) => {
    const connection = joinOptions(request, reply);
    if (connection === undefined) return reply;
    const found = findRun(request, reply);
    if (found === undefined) return reply;
    const [thread, run] = found;
    ensureLog(events, request.params.deploymentId, thread, run);
    const modes = connection.modes ?? ownModes(run);
    return streamRun(deps, reply, { thread, run, stateless: false }, { ...connection, modes });
  });
}

function registerStatelessJoin(
  app: FastifyInstance,
  deps: AgentRoutesDeps,
  { opts, path, newThread }: RouteKit,
): void {
  const { events, store } = deps;
  // A stateless run's thread is deleted when it ends; its log still answers a late join.
  app.get<Route>(path("/runs/:runId/stream"), opts, async (request: Req, reply) => {
    const connection = joinOptions(request, reply);
    if (connection === undefined) return reply;
    const { deploymentId, runId } = request.params;
    const log = events.get(runId);
    if (log === undefined || log.deploymentId !== deploymentId)
      return notFound(reply, `Run ${runId} not found.`);
    const thread = store.get(deploymentId, log.threadId);
    const run = thread?.runs.find((candidate) => candidate.run_id === runId);
    if (thread === undefined || run === undefined) {
      // Gone with its temporary thread: replay what was logged, nothing can be cancelled.
      const ended = { thread: newThread(log.threadId, {}), stateless: true };
      return streamRun(
        deps,
        reply,
        { ...ended, run: { run_id: runId } as RunRecord },
        { ...connection, cancelOnDisconnect: false },
      );
    }
    return streamRun(
      deps,
      reply,
      { thread, run, stateless: true },
      { ...connection, modes: connection.modes ?? ownModes(run) },
    );
  });
}
