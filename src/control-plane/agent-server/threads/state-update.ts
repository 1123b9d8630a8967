import { current, findCheckpoint, restoreState, saveCheckpoint } from "./checkpoints.js";
import { firstNode, NODES } from "../graph.js";
import type { Checkpoint, StateMessage, ThreadRecord } from "../types.js";
import { isObject, parseMessages, type Parsed, type ValidationIssue } from "../validation.js";

/**
 * A state update (SDK threads.updateState, and each update of `supersteps` on thread create):
 * the messages are merged as LangGraph's add_messages merges them (a message with the id of one
 * in the state replaces it, others are appended) as if the node `as_node` wrote them, in a new
 * checkpoint whose `next` is what follows that node: nothing after `agent` or `review`, the
 * first node after `__start__`. Without `as_node`, the last node that wrote the state, or
 * `__start__` on a thread no node has written.
 */

export type StateUpdate = {
  messages: StateMessage[];
  as_node: string | undefined;
  /** Update from this checkpoint instead of the newest (a fork). */
  checkpoint_id: string | undefined;
};

const AS_NODES: readonly string[] = [...NODES, "__start__", "__input__"];

export function parseStateUpdate(raw: unknown, at: ValidationIssue["loc"] = ["body"]): Parsed<StateUpdate> {
  const issues: ValidationIssue[] = [];
  const body = isObject(raw) ? raw : {};
  if (!isObject(raw)) issues.push({ loc: at, msg: "Input should be a valid dictionary", type: "dict_type" });
  const messages = parseMessages(body.values ?? {}, issues, [...at, "values"]);
  const asNode = body.as_node;
  if (asNode !== undefined && asNode !== null && (typeof asNode !== "string" || !AS_NODES.includes(asNode)))
    issues.push({
      loc: [...at, "as_node"],
      msg: `Input should be a node of the graph: ${AS_NODES.map((n) => `'${n}'`).join(", ")}`,
      type: "enum",
    });
  const nested = isObject(body.checkpoint) ? body.checkpoint.checkpoint_id : undefined;
  const checkpointId = body.checkpoint_id ?? nested;
  if (checkpointId !== undefined && checkpointId !== null && typeof checkpointId !== "string")
    issues.push({
      loc: [...at, "checkpoint_id"],
      msg: "Input should be a checkpoint id",
      type: "string_type",
    });
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: {
      messages,
      as_node: typeof asNode === "string" ? asNode : undefined,
      checkpoint_id: typeof checkpointId === "string" ? checkpointId : undefined,
    },
  };
}

/** The node that last wrote the thread's state, if any. */
const lastWriter = (thread: ThreadRecord): string | undefined =>
  [...(thread.history ?? [])]
    .reverse()
    .flatMap((checkpoint) => Object.keys(checkpoint.writes ?? {}))
    .find((node) => (NODES as readonly string[]).includes(node));

/** Applies an update; undefined when its checkpoint_id is not in the thread's history. */
export function applyStateUpdate(
  thread: ThreadRecord,
  update: StateUpdate,
  at: string,
): Checkpoint | undefined {
  const base =
    update.checkpoint_id === undefined ? current(thread) : findCheckpoint(thread, update.checkpoint_id);
  if (update.checkpoint_id !== undefined && base === undefined) return undefined;
  if (base !== current(thread)) restoreState(thread, base);
  for (const message of update.messages) {
    const stored = thread.messages.find((candidate) => candidate.message.id === message.id);
    if (stored !== undefined) stored.message = message;
    else thread.messages.push({ run_id: "", message });
  }
  const asNode = update.as_node ?? lastWriter(thread) ?? "__start__";
  const fromStart = asNode === "__start__" || asNode === "__input__";
  const next = fromStart ? [firstNode(thread.messages.map((stored) => stored.message))] : [];
  const checkpoint = saveCheckpoint(thread, {
    runId: null,
    source: asNode === "__input__" ? "input" : "update",
    next,
    at,
    writes: { [asNode]: { messages: update.messages } },
  });
  checkpoint.parent_checkpoint_id = base?.checkpoint_id ?? null;
  return checkpoint;
}

/** `supersteps` of a thread create: `[{updates: [{values, as_node}]}]`, applied in order. */
export function parseSupersteps(raw: unknown): Parsed<StateUpdate[]> {
  if (raw === undefined || raw === null) return { ok: true, value: [] };
  const issues: ValidationIssue[] = [];
  const updates: StateUpdate[] = [];
  if (!Array.isArray(raw))
    return {
      ok: false,
      issues: [{ loc: ["body", "supersteps"], msg: "Input should be a valid list", type: "list_type" }],
    };
  raw.forEach((step: unknown, i) => {
    const list = isObject(step) ? step.updates : undefined;
    if (!Array.isArray(list))
      return issues.push({
        loc: ["body", "supersteps", i, "updates"],
        msg: "Input should be a valid list",
        type: "list_type",
      });
    list.forEach((update: unknown, j) => {
      const parsed = parseStateUpdate(update, ["body", "supersteps", i, "updates", j]);
      if (parsed.ok) updates.push(parsed.value);
      else issues.push(...parsed.issues);
    });
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: updates };
}
