import type { FastifyInstance, FastifyReply } from "fastify";
import { findCheckpoint } from "./checkpoints.js";
import {
  invalid,
  notFound,
  type AgentRoutesDeps,
  type Req,
  type Route,
  type RouteKit,
} from "../route-kit.js";
import { applyStateUpdate, parseStateUpdate } from "./state-update.js";
import { noGraph } from "./thread-routes.js";
import { isInProgress, type ThreadRecord } from "../types.js";
import { isObject } from "../validation.js";
import { checkpointView, stateView } from "../views.js";

/**
 * State edits and past states (docs/control-plane.md "Thread history"): a state update with
 * `as_node` (SDK threads.updateState), and the state at a checkpoint, by id in the path or as
 * `{checkpoint: {checkpoint_id}}` (SDK threads.getState with a checkpoint).
 */
export function registerStateRoutes(
  app: FastifyInstance,
  { ctx, threadEvents }: AgentRoutesDeps,
  kit: RouteKit,
): void {
  const { opts, path, findThread } = kit;
  // As the open-source server answers an update: these three fields only.
  const checkpointRef = (thread: ThreadRecord, checkpointId: string) => ({
    thread_id: thread.thread_id,
    checkpoint_ns: "",
    checkpoint_id: checkpointId,
  });
  const unknownCheckpoint = (reply: FastifyReply, thread: ThreadRecord, id: string) =>
    notFound(
      reply,
      `Checkpoint ${id} not found in the history of thread ${thread.thread_id} (the last 100 are kept).`,
    );

  app.post<Route>(path("/threads/:threadId/state"), opts, async (request: Req, reply) => {
    const parsed = parseStateUpdate(request.body ?? {});
    if (!parsed.ok) return invalid(reply, parsed.issues);
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    if (thread.runs.some(isInProgress))
      return reply.code(409).send({
        detail: `Thread ${thread.thread_id} has a run in progress; update its state once the run has ended.`,
      });
    if (thread.metadata.graph_id == null) return reply.code(400).send({ detail: noGraph(thread.thread_id) });
    const checkpoint = applyStateUpdate(thread, parsed.value, kit.iso());
    if (checkpoint === undefined) return unknownCheckpoint(reply, thread, parsed.value.checkpoint_id ?? "");
    await ctx.commit();
    threadEvents.stateUpdated(request.params.deploymentId, thread.thread_id, stateView(thread));
    return { checkpoint: checkpointRef(thread, checkpoint.checkpoint_id) };
  });

  // Metadata merged into the newest checkpoint's (SDK threads.patchState).
  app.patch<Route>(path("/threads/:threadId/state"), opts, async (request: Req, reply) => {
    const metadata = isObject(request.body) ? request.body.metadata : undefined;
    if (!isObject(metadata))
      return invalid(reply, [
        { loc: ["body", "metadata"], msg: "Input should be a valid dictionary", type: "dict_type" },
      ]);
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    const checkpoint = thread.history?.at(-1);
    if (checkpoint === undefined)
      return notFound(
        reply,
        `Thread ${thread.thread_id} has no checkpoint yet; run it or update its state first.`,
      );
    checkpoint.extra_metadata = { ...checkpoint.extra_metadata, ...metadata };
    await ctx.commit();
    return reply.code(204).send();
  });

  const stateAt = (request: Req, reply: FastifyReply, checkpointId: unknown) => {
    if (typeof checkpointId !== "string")
      return invalid(reply, [
        { loc: ["body", "checkpoint", "checkpoint_id"], msg: "Field required", type: "missing" },
      ]);
    const thread = findThread(request, reply);
    if (thread === undefined) return reply;
    const checkpoint = findCheckpoint(thread, checkpointId);
    return checkpoint === undefined
      ? unknownCheckpoint(reply, thread, checkpointId)
      : checkpointView(thread, checkpoint);
  };

  app.get<Route>(path("/threads/:threadId/state/:checkpointId"), opts, async (request: Req, reply) =>
    stateAt(request, reply, request.params.checkpointId),
  );

  app.post<Route>(path("/threads/:threadId/state/checkpoint"), opts, async (request: Req, reply) => {
    const body = isObject(request.body) ? request.body : {};
    const checkpoint = isObject(body.checkpoint) ? body.checkpoint.checkpoint_id : undefined;
    return stateAt(request, reply, checkpoint);
  });
}
