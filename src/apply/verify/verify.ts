import type { Clock } from "../../clock.js";
import type { Verify } from "../../schema/manifest.js";
import type { VerifyResult } from "../apply-types.js";
import type { AgentServerPort } from "../ports.js";
import { answerText, checkAnswer, keptText, readRunStream, type Streamed } from "./verify-stream.js";

/** The smoke question of spec.verify: its top-level input and expect_contains. */
export type SmokeQuestion = Pick<Verify, "assistant_id" | "expect_contains" | "timeout_seconds"> & {
  input: Record<string, unknown>;
};

export { checkAnswer } from "./verify-stream.js";

export type VerifyContext = {
  agent: AgentServerPort;
  clock: Clock;
  signal?: AbortSignal | undefined;
  /** Name of the deployment, recorded in the thread metadata. */
  name: string;
};

/**
 * The smoke conversation of spec.verify on one agent server, streamed as a chat UI would
 * (values and messages-tuple): reports when the first event and the first answer token came,
 * and the answer. Reuses plumb's thread when it still exists, and runs with multitask_strategy
 * rollback so a stuck earlier check is interrupted and deleted instead of blocking this one; a
 * check that times out disconnects with on_disconnect cancel. Bounded by timeout_seconds.
 */
export async function runVerify(
  baseUrl: string,
  spec: SmokeQuestion,
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
  let streamed: Streamed | null = null;
  // What the agent server said (its error, the answer) may quote a secret: redacted before it is
  // kept, then clipped (MAX_KEPT_TEXT; the answer to 200 characters by answerText).
  const redact = (text: string) => keptText(ctx.agent.redact(text));
  const result = (ok: boolean, message: string, answer: string | null = null): VerifyResult => ({
    ok,
    thread_id: threadId,
    run_id: streamed?.runId ?? null,
    message: redact(message),
    first_event_ms: streamed?.firstEventMs ?? null,
    first_token_ms: streamed?.firstTokenMs ?? null,
    answer,
  });
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
    const events = ctx.agent.streamRun(
      baseUrl,
      threadId,
      {
        assistant_id: spec.assistant_id,
        input: spec.input,
        multitask_strategy: "rollback",
        stream_mode: ["values", "messages-tuple"],
        on_disconnect: "cancel",
      },
      { signal },
    );
    streamed = await readRunStream(events, ctx.clock);
    if (streamed.error !== null) return result(false, `the run failed: ${streamed.error}`);
    // A server that streams no values (or ended early): the thread's state is the answer.
    const messages = streamed.messages ?? (await ctx.agent.getState(baseUrl, threadId, { signal })).messages;
    const problem = checkAnswer(messages, spec.expect_contains);
    const answer = answerText(messages, (text) => ctx.agent.redact(text));
    const timing = `first event ${streamed.firstEventMs ?? "-"} ms, first token ${streamed.firstTokenMs ?? "-"} ms`;
    return result(
      problem === null,
      problem === null ? `answered (${timing})` : `${problem} (${timing})`,
      answer,
    );
  } catch (error) {
    const message = budget.signal.aborted
      ? `no answer within ${spec.timeout_seconds ?? 60}s`
      : ctx.signal?.aborted
        ? "interrupted"
        : `verify failed: ${error instanceof Error ? error.message : String(error)}`;
    return result(false, message);
  } finally {
    budget.abort();
    await timer;
  }
}
