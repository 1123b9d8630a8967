import { current } from "../threads/checkpoints.js";
import { GRAPH_ID, textOf } from "../graph.js";
import type { RunEvents } from "../runs/run-events.js";
import type { RunRecord, StateMessage, ThreadRecord } from "../types.js";
import { isStopped, runError, stateValues } from "../views.js";

/**
 * What a run streams, in the shapes the open-source agent server sends and the SDK parses:
 * `values` (the whole state) when the run starts and ends, the answer as `messages` chunks
 * (`messages-tuple`: `[chunk, metadata]`; legacy `messages`: metadata/partial/complete), the
 * node's `updates`, an `error` for a failed run; `end` closes every stream.
 */

/** Splits an answer into word-sized chunks, as a model streams tokens. */
export function splitIntoChunks(text: string): string[] {
  const chunks = text.match(/\s*\S+\s*/g) ?? [];
  return chunks.length > 0 ? chunks : [text];
}

const replyOf = (thread: ThreadRecord, run: RunRecord): StateMessage | undefined =>
  thread.messages.filter((stored) => stored.run_id === run.run_id && stored.message.type === "ai").at(-1)
    ?.message;

export function emitRunStarted(events: RunEvents, thread: ThreadRecord, run: RunRecord): void {
  events.emit(run.run_id, "values", "values", stateValues(thread));
}

export function emitRunEnded(events: RunEvents, thread: ThreadRecord, run: RunRecord): void {
  const reply = run.status === "success" ? replyOf(thread, run) : undefined;
  if (reply !== undefined) emitReply(events, thread, run, reply);
  // Stopped by this run (a breakpoint, or a node that called interrupt()): `__interrupt__` frames,
  // as LangGraph streams them; a final `values` only when a node wrote the state (not before it).
  const last = current(thread);
  const stopped = run.status === "success" && last?.run_id === run.run_id && isStopped(thread);
  const raised = stopped ? (last.tasks ?? []).flatMap((task) => task.interrupts) : [];
  if (run.status === "success" && (!stopped || last.stopped_after !== undefined))
    events.emit(run.run_id, "values", "values", stateValues(thread));
  if (stopped) {
    events.emit(run.run_id, "updates", "updates", { __interrupt__: structuredClone(raised) });
    events.emit(run.run_id, "values", "values", { __interrupt__: structuredClone(raised) });
  }
  if (run.status === "error" || run.status === "timeout")
    events.emit(run.run_id, "always", "error", runError(run));
  // interrupted (cancelled, interrupted or rolled back by a newer run): the stream just ends.
  events.close(run.run_id);
}

function emitReply(events: RunEvents, thread: ThreadRecord, run: RunRecord, reply: StateMessage): void {
  const node = Object.keys(current(thread)?.writes ?? {})[0] ?? "agent";
  const metadata = {
    graph_id: GRAPH_ID,
    assistant_id: run.assistant_id,
    run_id: run.run_id,
    thread_id: thread.thread_id,
    langgraph_step: 1,
    langgraph_node: node,
    langgraph_triggers: [`branch:to:${node}`],
  };
  const id = run.run_id;
  events.emit(id, "messages", "messages/metadata", { [reply.id]: { metadata } });
  let sofar = "";
  for (const piece of splitIntoChunks(textOf(reply.content))) {
    sofar += piece;
    const chunk = { type: "AIMessageChunk", content: piece, id: reply.id, tool_call_chunks: [] };
    events.emit(id, "messages-tuple", "messages", [chunk, metadata]);
    events.emit(id, "messages", "messages/partial", [{ type: "ai", content: sofar, id: reply.id }]);
  }
  events.emit(id, "messages", "messages/complete", [{ ...reply }]);
  events.emit(id, "updates", "updates", { [node]: { messages: [{ ...reply }] } });
}
