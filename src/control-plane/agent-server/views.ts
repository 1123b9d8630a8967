import { current, pendingTasks } from "./threads/checkpoints.js";
import {
  isInProgress,
  type Checkpoint,
  type Interrupt,
  type PendingTask,
  type RunRecord,
  type ThreadRecord,
} from "./types.js";

/** Response shapes of the agent server API (what @langchain/langgraph-sdk 2.x expects). */

export const stateValues = (thread: ThreadRecord) => ({
  messages: thread.messages.map((stored) => ({ ...stored.message })),
});

/** Stopped: nodes are due (a breakpoint before, an interrupt), or interrupt_after stopped it. */
export const isStopped = (thread: ThreadRecord): boolean =>
  pendingTasks(thread).length > 0 || current(thread)?.stopped_after !== undefined;

/**
 * busy while a run is pending or running; error when the last run ended in error or timeout;
 * interrupted while stopped (a breakpoint or an interrupt stopped the graph); else idle.
 */
function threadStatus(thread: ThreadRecord): "idle" | "busy" | "error" | "interrupted" {
  if (thread.runs.some(isInProgress)) return "busy";
  const last = thread.runs.at(-1);
  if (last !== undefined && (last.status === "error" || last.status === "timeout")) return "error";
  return isStopped(thread) ? "interrupted" : "idle";
}

/**
 * A thread's `interrupts`, by task id: what each due node raised, `[]` for a breakpoint (as the
 * open-source server lists them), and `[]` for the node interrupt_after stopped behind.
 */
function threadInterrupts(thread: ThreadRecord): Record<string, Interrupt[]> {
  const after = current(thread)?.stopped_after;
  const entries: Array<[string, Interrupt[]]> = pendingTasks(thread).map((t) => [
    t.id,
    structuredClone(t.interrupts),
  ]);
  if (after !== undefined) entries.push([after, []]);
  return Object.fromEntries(entries);
}

const interruptList = (tasks: readonly PendingTask[]) => structuredClone(tasks.flatMap((t) => t.interrupts));

/**
 * A run's output (runs.wait, join): the state values; for a stopped thread, as LangGraph's last
 * `values` frame, only `{__interrupt__: [...]}` (`[]` at a breakpoint).
 */
export function outputValues(thread: ThreadRecord) {
  return isStopped(thread) ? { __interrupt__: interruptList(pendingTasks(thread)) } : stateValues(thread);
}

const taskView = (task: PendingTask) => ({
  id: task.id,
  name: task.name,
  path: ["__pregel_pull", task.name],
  error: null,
  interrupts: structuredClone(task.interrupts),
  checkpoint: null,
  state: null,
  result: null,
});

export const threadView = (thread: ThreadRecord) => ({
  thread_id: thread.thread_id,
  created_at: thread.created_at,
  updated_at: thread.updated_at,
  state_updated_at: thread.state_updated_at,
  metadata: { ...thread.metadata },
  status: threadStatus(thread),
  values: stateValues(thread),
  interrupts: threadInterrupts(thread),
});

export const runView = (run: RunRecord) => ({
  run_id: run.run_id,
  thread_id: run.thread_id,
  assistant_id: run.assistant_id,
  status: run.status,
  multitask_strategy: run.multitask_strategy,
  created_at: run.created_at,
  updated_at: run.updated_at,
  metadata: { ...run.metadata },
  kwargs: structuredClone(
    run.kwargs ?? { input: { messages: run.input_messages.map((message) => ({ ...message })) } },
  ),
});

/** `{error, message}` of a failed run: "GraphError: text" splits into the error's name and message. */
export function runError(run: { status: string; error?: string }): { error: string; message: string } {
  const text = run.error ?? (run.status === "timeout" ? "the run timed out" : "the run failed");
  const named = /^([A-Za-z]+Error): (.*)$/s.exec(text);
  if (named) return { error: named[1]!, message: named[2]! };
  return { error: run.status === "timeout" ? "TimeoutError" : "Error", message: text };
}

const checkpointRef = (thread: ThreadRecord, checkpointId: string) => ({
  thread_id: thread.thread_id,
  checkpoint_ns: "",
  checkpoint_id: checkpointId,
  checkpoint_map: null,
});

/** One checkpoint in the shape of GET state (SDK threads.getState / getHistory). */
export function checkpointView(thread: ThreadRecord, checkpoint: Checkpoint) {
  const all = thread.history ?? [];
  const index = all.indexOf(checkpoint);
  const parentId =
    checkpoint.parent_checkpoint_id !== undefined
      ? checkpoint.parent_checkpoint_id
      : (all[index - 1]?.checkpoint_id ?? null);
  const tasks = checkpoint.tasks ?? [];
  return {
    values: { messages: checkpoint.values.messages.map((message) => ({ ...message })) },
    next: tasks.map((task) => task.name),
    tasks: tasks.map(taskView),
    checkpoint: checkpointRef(thread, checkpoint.checkpoint_id),
    metadata: {
      ...checkpoint.extra_metadata,
      source: checkpoint.source ?? "loop",
      step: checkpoint.step ?? index,
      writes: checkpoint.writes ?? null,
      parents: {},
      run_id: checkpoint.run_id,
      thread_id: thread.thread_id,
    },
    created_at: checkpoint.created_at,
    parent_checkpoint: parentId === null ? null : checkpointRef(thread, parentId),
    interrupts: interruptList(tasks),
  };
}

/** The thread's state: its newest checkpoint, or the empty state of a thread never run. */
export function stateView(thread: ThreadRecord) {
  const last = thread.history?.at(-1);
  if (last !== undefined && last.checkpoint_id === thread.checkpoint_id) return checkpointView(thread, last);
  return {
    values: stateValues(thread),
    next: [] as string[],
    tasks: [] as unknown[],
    checkpoint: checkpointRef(thread, thread.checkpoint_id),
    metadata: {},
    created_at: thread.state_updated_at,
    parent_checkpoint: null,
    interrupts: [] as unknown[],
  };
}
