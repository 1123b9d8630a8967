import type { StateMessage } from "./types.js";

/** Name of the one graph the simulated agent server deploys; `assistant_id` must name it. */
export const GRAPH_ID = "agent";

/** The graph's nodes: `agent` answers; `review` asks a human first (interrupt()). */
export const NODES = ["agent", "review"] as const;
export type NodeName = (typeof NODES)[number];

/** The message that routes to `review`, which interrupts until resumed. */
const APPROVAL_MARKER = "approve?";

export type GraphOutcome =
  | { status: "success"; reply: string | null }
  | { status: "interrupt"; value: unknown }
  | { status: "error"; error: string }
  | { status: "timeout"; error: string };

/** Plain text of a message content: a string, or the `text` of its content blocks. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) =>
      typeof block === "object" && block !== null && "text" in block && typeof block.text === "string"
        ? block.text
        : "",
    )
    .join("");
}

const lastHumanText = (messages: readonly StateMessage[]): string | undefined => {
  const last = messages.at(-1);
  return last === undefined || last.type !== "human" ? undefined : textOf(last.content);
};

/** The node START leads to: `review` for the approval marker, `agent` otherwise. */
export function firstNode(messages: readonly StateMessage[]): NodeName {
  return lastHumanText(messages)?.trim().toLowerCase() === APPROVAL_MARKER ? "review" : "agent";
}

/**
 * Runs one node of the simulated graph on the state's messages. `agent` answers the last
 * message when it is a human one: "ping" gets "pong", anything else is echoed; the exact texts
 * "raise error" and "raise timeout" make the run end `error` / `timeout`. `review` calls
 * interrupt() with `{question}` and, once resumed with a value, answers "approved: <value>".
 */
export function runNode(
  node: NodeName,
  messages: readonly StateMessage[],
  resume: { value: unknown } | undefined,
): GraphOutcome {
  if (node === "review") {
    if (resume === undefined) return { status: "interrupt", value: { question: "Approve this request?" } };
    const answer = typeof resume.value === "string" ? resume.value : JSON.stringify(resume.value);
    return { status: "success", reply: `approved: ${answer}` };
  }
  const text = lastHumanText(messages);
  if (text === undefined) return { status: "success", reply: null };
  const command = text.trim().toLowerCase();
  if (command === "raise error") return { status: "error", error: "GraphError: the graph raised on request" };
  if (command === "raise timeout") return { status: "timeout", error: "the run exceeded its time limit" };
  if (command === "ping") return { status: "success", reply: "pong" };
  return { status: "success", reply: text };
}
