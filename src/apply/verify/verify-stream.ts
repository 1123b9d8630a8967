import type { Clock } from "../../clock.js";
import type { Message } from "../ports.js";

// Pure helpers of verify: reading a run's event stream (when the first event and the first token
// came, the last state, an error) and the answer in a thread's messages.

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

/** The `ai` messages after the last human message. */
const answers = (messages: readonly Message[]) =>
  messages.slice(messages.map((m) => m.type).lastIndexOf("human") + 1).filter((m) => m.type === "ai");

/** Pure: does the thread state hold an `ai` answer after the last human message (containing `expect`)? */
export function checkAnswer(messages: readonly Message[], expect: string | undefined): string | null {
  const found = answers(messages);
  if (found.length === 0) return "no ai message answered";
  if (expect !== undefined && !found.some((m) => messageText(m.content).includes(expect))) {
    return `the ai answer does not contain "${expect}"`;
  }
  return null;
}

/** The whole answer: the text of the `ai` messages after the last human one; null when there is none. */
export function fullAnswer(messages: readonly Message[]): string | null {
  const found = answers(messages);
  return found.length === 0 ? null : found.map((m) => messageText(m.content)).join("\n");
}

/**
 * The most of an agent server's text (a run's `error` event) kept in a result: one event may hold
 * 16 MiB, and a run's error went whole into the result, the status record's `last_error` and
 * `checks.failures`, the output and a PR comment (an 8 MB record from one 4 MiB error). As
 * error-detail.ts's clip of an API error's `detail`, it is applied after the redactor: clipped
 * first, a secret cut in half by it would no longer be known, and its first half would show.
 */
export const MAX_KEPT_TEXT = 2_000;

/** `text` (already redacted) cut to MAX_KEPT_TEXT, saying how much was left out. */
export function keptText(text: string): string {
  if (text.length <= MAX_KEPT_TEXT) return text;
  const kept = text.slice(0, MAX_KEPT_TEXT).replace(/[\ud800-\udbff]$/, "");
  return `${kept}… (${text.length - kept.length} more characters)`;
}

/** The answer's text for reports, cut short: an agent's reply may be long. */
const ANSWER_SHOWN = 200;

/** The answer, redacted whole and then cut: cut first, a secret across the cut was half shown. */
export function answerText(messages: readonly Message[], redact: (text: string) => string): string | null {
  const answer = fullAnswer(messages);
  if (answer === null || answer === "") return null;
  const text = redact(answer);
  return text.length > ANSWER_SHOWN ? `${text.slice(0, ANSWER_SHOWN)}…` : text;
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
export type Streamed = {
  runId: string | null;
  messages: Message[] | null;
  error: string | null;
  firstEventMs: number | null;
  firstTokenMs: number | null;
};

export async function readRunStream(
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
