import type { StateMessage } from "./types.js";

/** Name of the one graph the simulated agent server deploys; `assistant_id` must name it. */
export const GRAPH_ID = "agent";

export type GraphOutcome =
  | { status: "success"; reply: string | null }
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

/**
 * The simulated graph: answers the last message when it is a human one. "ping" gets "pong",
 * anything else is echoed; the exact texts "raise error" and "raise timeout" make the run end
 * `error` / `timeout`, so clients can exercise those statuses.
 */
export function runGraph(messages: readonly StateMessage[]): GraphOutcome {
  const last = messages.at(-1);
  if (last === undefined || last.type !== "human") return { status: "success", reply: null };
  const text = textOf(last.content);
  const command = text.trim().toLowerCase();
  if (command === "raise error") return { status: "error", error: "GraphError: the graph raised on request" };
  if (command === "raise timeout") return { status: "timeout", error: "the run exceeded its time limit" };
  if (command === "ping") return { status: "success", reply: "pong" };
  return { status: "success", reply: text };
}
