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
function messageText(content: unknown): string {
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

/** The answer's text for reports, cut short: an agent's reply may be long. */
const ANSWER_SHOWN = 200;

function answerText(messages: readonly Message[]): string | null {
  const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
  const answer = messages
    .slice(lastHuman + 1)
    .filter((m) => m.type === "ai")
    .map((m) => messageText(m.content))
    .join("\n");
  if (answer === "") return null;
  return answer.length > ANSWER_SHOWN ? `${answer.slice(0, ANSWER_SHOWN)}…` : answer;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const textOr = (value: unknown, fallback: string) =>
  typeof value === "string"
    ? value
    : value === null || value === undefined
      ? fallback
      : JSON.stringify(value);

/** What the run's event stream said: its id, the last state, an error, and when things arrived. */
type Streamed = {
  runId: string | null;
  messages: Message[] | null;
  error: string | null;
  firstEventMs: number | null;
  firstTokenMs: number | null;
};

async function readRunStream(
  events: AsyncIterable<{ event: string; data: unknown }>,
  clock: Clock,
): Promise<Streamed> {
  const started = clock.now();
  const seen: Streamed = { runId: null, messages: null, error: null, firstEventMs: null, firstTokenMs: null };
  for await (const { event, data } of events) {
    seen.firstEventMs ??= clock.now() - started;
    if (event === "metadata" && isRecord(data) && typeof data.run_id === "string") seen.runId = data.run_id;
    if (event === "messages") seen.firstTokenMs ??= clock.now() - started;
    if (event === "values" && isRecord(data) && Array.isArray(data.messages))
      seen.messages = (data.messages as unknown[])
        .filter(isRecord)
        .map((m) => ({ type: String(m.type), content: m.content }));
    if (event === "error")
      seen.error = isRecord(data)
        ? `${textOr(data.error, "Error")}: ${textOr(data.message, "")}`
        : textOr(data, "the run failed");
    if (event === "end") break;
  }
  return seen;
}

/**
 * The smoke conversation of spec.verify on one agent server, streamed as a chat UI would
 * (values and messages-tuple): reports when the first event and the first answer token came,
 * and the answer. Reuses plumb's thread when it still exists, and runs with multitask_strategy
 * rollback so a stuck earlier check is interrupted and deleted instead of blocking this one; a
 * check that times out disconnects with on_disconnect cancel. Bounded by timeout_seconds.
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
  let streamed: Streamed | null = null;
  // What the agent server said (its error, the answer) may quote a secret: redacted before it is kept.
  const redact = (text: string) => ctx.agent.redact(text);
  const result = (ok: boolean, message: string, answer: string | null = null): VerifyResult => ({
    ok,
    thread_id: threadId,
    run_id: streamed?.runId ?? null,
    message: redact(message),
    first_event_ms: streamed?.firstEventMs ?? null,
    first_token_ms: streamed?.firstTokenMs ?? null,
    answer: answer === null ? null : redact(answer),
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
    const answer = answerText(messages);
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
