import { randomUUID } from "node:crypto";
import type { FastifyReply } from "fastify";
import { findCheckpoint } from "../threads/checkpoints.js";
import { type AgentRoutesDeps, type Params, type RouteKit } from "../route-kit.js";
import { isInProgress, type RunRecord, type ThreadRecord } from "../types.js";
import { parseRunCreate, type RunCreateBody } from "../validation.js";

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
export function createRunCreator(deps: AgentRoutesDeps, kit: RouteKit) {
  const start = createRunStarter(deps, kit);
  return async (
    params: Params,
    rawBody: unknown,
    reply: FastifyReply,
    onCreated: (run: RunRecord) => void = () => undefined,
  ): Promise<CreatedRun | undefined> => {
    const result = await start(params, rawBody, onCreated);
    if ("refused" in result) return void reply.code(result.refused).send(result.body);
    void reply.header("content-location", runPath({ ...result, stateless: params.threadId === undefined }));
    return result;
  };
}

/** Why a run was not created: the HTTP status and body to answer. */
type Refusal = { refused: 404 | 409 | 422; body: { detail: unknown } };
const refuse = (refused: Refusal["refused"], detail: unknown): Refusal => ({ refused, body: { detail } });

/** Creates a run from a request body (or a cron's payload); a refusal says why it could not. */
export function createRunStarter(
  { ctx, store, scheduler, events, assistants }: AgentRoutesDeps,
  kit: RouteKit,
) {
  return async (
    params: { deploymentId: string; threadId: string | undefined },
    rawBody: unknown,
    onCreated: (run: RunRecord) => void = () => undefined,
  ): Promise<CreatedRun | Refusal> => {
    const parsed = parseRunCreate(rawBody, ctx.webhookAllowHosts);
    if (!parsed.ok) return refuse(422, parsed.issues);
    const body = parsed.value;
    const { deploymentId } = params;
    const pathThread = params.threadId;
    const stateless = pathThread === undefined;
    let thread = pathThread === undefined ? undefined : store.get(deploymentId, pathThread);
    if (!stateless && thread === undefined && body.if_not_exists !== "create")
      return refuse(404, `Thread ${pathThread} not found.`);
    const assistant = assistants.resolve(deploymentId, body.assistant_id);
    if (assistant === undefined) {
      return refuse(
        404,
        `Assistant ${body.assistant_id} not found; name the graph ("agent") or the assistant_id of an assistant of this deployment.`,
      );
    }
    const forkFrom = body.options.fork_from;
    if (thread !== undefined && forkFrom !== undefined && findCheckpoint(thread, forkFrom) === undefined)
      return refuse(404, `Checkpoint ${forkFrom} not found in the history of thread ${thread.thread_id}.`);
    if (thread === undefined) {
      thread = kit.newThread(pathThread ?? randomUUID(), {});
      if (stateless && body.on_completion === "delete") thread.temporary = true;
      store.put(deploymentId, thread);
    }
    // The thread remembers its graph and assistant, as on the open-source server (a chat UI
    // searches threads by them); a busy thread keeps what its running run set.
    if (!thread.runs.some(isInProgress))
      thread.metadata = {
        ...thread.metadata,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
      };
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
      return refuse(
        409,
        `Thread ${thread.thread_id} already has a run in progress; wait for it, or create the run with multitask_strategy "interrupt", "rollback" or "enqueue".`,
      );
    }
    await ctx.commit();
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
