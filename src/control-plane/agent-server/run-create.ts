import { randomUUID } from "node:crypto";
import type { FastifyReply } from "fastify";
import { findCheckpoint } from "./checkpoints.js";
import { invalid, notFound, type AgentRoutesDeps, type Params, type RouteKit } from "./route-kit.js";
import type { RunRecord, ThreadRecord } from "./types.js";
import { parseRunCreate, type RunCreateBody } from "./validation.js";

/** The record fields of the run's options; breakpoints default to its assistant's config. */
function runOptionsOf(body: RunCreateBody, config: Record<string, unknown>, now: number): Partial<RunRecord> {
  const { options } = body;
  const configured = (field: string) => {
    const value = config[field];
    return value === "*"
      ? ["*"]
      : Array.isArray(value)
        ? value.filter((n) => typeof n === "string")
        : undefined;
  };
  const before = options.interrupt_before ?? configured("interrupt_before");
  const after = options.interrupt_after ?? configured("interrupt_after");
  return {
    ...(options.continues && { continues: true as const }),
    ...(options.command !== undefined && { command: options.command }),
    ...(before !== undefined && { interrupt_before: before }),
    ...(after !== undefined && { interrupt_after: after }),
    ...(options.fork_from !== undefined && { fork_from: options.fork_from }),
    ...(options.after_seconds > 0 && {
      not_before: new Date(now + options.after_seconds * 1000).toISOString(),
    }),
    kwargs: options.kwargs,
  };
}

export type CreatedRun = { thread: ThreadRecord; run: RunRecord; body: RunCreateBody };

/**
 * Creates a run from a request body, on the thread of the path or, for a stateless run (no
 * thread in the path), on a temporary thread deleted when the run ends unless
 * `on_completion: "keep"`. Answers the error itself and returns undefined when it cannot.
 */
export function createRunCreator(
  { ctx, store, scheduler, events, assistants }: AgentRoutesDeps,
  kit: RouteKit,
) {
  return async (
    params: Params,
    rawBody: unknown,
    reply: FastifyReply,
    onCreated: (run: RunRecord) => void = () => undefined,
  ): Promise<CreatedRun | undefined> => {
    const parsed = parseRunCreate(rawBody);
    if (!parsed.ok) return void invalid(reply, parsed.issues);
    const body = parsed.value;
    const { deploymentId } = params;
    const stateless = params.threadId === undefined;
    let thread = stateless ? undefined : store.get(deploymentId, params.threadId);
    if (!stateless && thread === undefined && body.if_not_exists !== "create")
      return void notFound(reply, `Thread ${params.threadId} not found.`);
    const assistant = assistants.resolve(deploymentId, body.assistant_id);
    if (assistant === undefined) {
      return void notFound(
        reply,
        `Assistant ${body.assistant_id} not found; name the graph ("agent") or the assistant_id of an assistant of this deployment.`,
      );
    }
    const forkFrom = body.options.fork_from;
    if (thread !== undefined && forkFrom !== undefined && findCheckpoint(thread, forkFrom) === undefined)
      return void notFound(
        reply,
        `Checkpoint ${forkFrom} not found in the history of thread ${thread.thread_id}.`,
      );
    if (thread === undefined) {
      thread = kit.newThread(stateless ? randomUUID() : params.threadId, {});
      if (stateless && body.on_completion === "delete") thread.temporary = true;
      store.put(deploymentId, thread);
    }
    const now = kit.iso();
    const run: RunRecord = {
      run_id: randomUUID(),
      thread_id: thread.thread_id,
      assistant_id: assistant.assistant_id,
      status: "pending",
      multitask_strategy: body.multitask_strategy,
      created_at: now,
      updated_at: now,
      metadata: body.metadata,
      input_messages: body.input_messages,
      ...runOptionsOf(body, assistant.config, ctx.clock.now()),
    };
    onCreated(run);
    events.open(deploymentId, thread.thread_id, run.run_id, 1);
    if (scheduler.submit(thread, run) === "conflict") {
      events.drop(run.run_id);
      return void reply.code(409).send({
        detail: `Thread ${thread.thread_id} already has a run in progress; wait for it, or create the run with multitask_strategy "interrupt", "rollback" or "enqueue".`,
      });
    }
    await ctx.commit();
    void reply.header("content-location", runPath({ thread, run, stateless }));
    return { thread, run, body };
  };
}

/** Where the run lives, as the SDK reads it from Content-Location. */
export const runPath = ({
  thread,
  run,
  stateless,
}: {
  thread: ThreadRecord;
  run: RunRecord;
  stateless: boolean;
}) => (stateless ? `/runs/${run.run_id}` : `/threads/${thread.thread_id}/runs/${run.run_id}`);
