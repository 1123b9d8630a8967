import type { Clock } from "../clock.js";
import type { Verify } from "../schema/manifest.js";
import type { VerifyResult } from "./apply-types.js";
import type { AgentServerPort, Message } from "./ports.js";

export type VerifyContext = {
  agent: AgentServerPort;
  clock: Clock;
  signal?: AbortSignal | undefined;
  /** Name of the deployment, recorded in the thread metadata. */
  name: string;
};

/** Text of a message's content: a string, or the text parts of a content list. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) =>
      typeof part === "string"
        ? part
        : part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string"
          ? (part as { text: string }).text
          : "",
    )
    .join("");
}

/** Pure: does the thread state hold an `ai` answer after the last human message (containing `expect`)? */
export function checkAnswer(messages: readonly Message[], expect: string | undefined): string | null {
  const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
  const answers = messages.slice(lastHuman + 1).filter((m) => m.type === "ai");
  if (answers.length === 0) return "no ai message answered";
  if (expect !== undefined && !answers.some((m) => messageText(m.content).includes(expect))) {
    return `the ai answer does not contain "${expect}"`;
  }
  return null;
}

/**
 * The smoke conversation of spec.verify on one agent server. Reuses plumb's thread when it still
 * exists, and runs with multitask_strategy rollback so a stuck earlier check is interrupted and
 * deleted instead of blocking this one. The whole check is bounded by timeout_seconds.
 */
export async function runVerify(
  baseUrl: string,
  spec: Verify,
  previousThreadId: string | null,
  ctx: VerifyContext,
): Promise<VerifyResult> {
  const budget = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, budget.signal]) : budget.signal;
  const timeoutMs = (spec.timeout_seconds ?? 60) * 1000;
  const timer = ctx.clock.sleep(timeoutMs, signal).then(
    () => budget.abort(new Error("verify timeout")),
    () => undefined,
  );
  let threadId: string | null = null;
  let runId: string | null = null;
  try {
    const reused = previousThreadId ? await ctx.agent.getThread(baseUrl, previousThreadId, { signal }) : null;
    threadId =
      reused?.thread_id ??
      (
        await ctx.agent.createThread(
          baseUrl,
          { created_by: "plumb", purpose: "verify", deployment: ctx.name },
          { signal },
        )
      ).thread_id;
    const run = await ctx.agent.createRun(
      baseUrl,
      threadId,
      { assistant_id: spec.assistant_id, input: spec.input, multitask_strategy: "rollback" },
      { signal },
    );
    runId = run.run_id;
    await ctx.agent.joinRun(baseUrl, threadId, runId, { signal });
    const state = await ctx.agent.getState(baseUrl, threadId, { signal });
    const problem = checkAnswer(state.messages, spec.expect_contains);
    return { ok: problem === null, thread_id: threadId, run_id: runId, message: problem ?? "answered" };
  } catch (error) {
    const message = budget.signal.aborted
      ? `no answer within ${spec.timeout_seconds ?? 60}s`
      : ctx.signal?.aborted
        ? "interrupted"
        : `verify failed: ${error instanceof Error ? error.message : String(error)}`;
    return { ok: false, thread_id: threadId, run_id: runId, message };
  } finally {
    budget.abort();
    await timer;
  }
}
