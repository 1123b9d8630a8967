import { isInProgress, type Checkpoint, type RunRecord, type ThreadRecord } from "./types.js";

/** Response shapes of the agent server API (what @langchain/langgraph-sdk 2.x expects). */

export const stateValues = (thread: ThreadRecord) => ({
  messages: thread.messages.map((stored) => ({ ...stored.message })),
});

/** idle, busy while a run is pending or running, error when the last run ended in error or timeout. */
function threadStatus(thread: ThreadRecord): "idle" | "busy" | "error" {
  if (thread.runs.some(isInProgress)) return "busy";
  const last = thread.runs.at(-1);
  return last !== undefined && (last.status === "error" || last.status === "timeout") ? "error" : "idle";
}

export const threadView = (thread: ThreadRecord) => ({
  thread_id: thread.thread_id,
  created_at: thread.created_at,
  updated_at: thread.updated_at,
  state_updated_at: thread.state_updated_at,
  metadata: { ...thread.metadata },
  status: threadStatus(thread),
  values: stateValues(thread),
  interrupts: {},
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
  kwargs: { input: { messages: run.input_messages.map((message) => ({ ...message })) } },
});

export const stateView = (thread: ThreadRecord) => ({
  values: stateValues(thread),
  next: [] as string[],
  tasks: [] as unknown[],
  checkpoint: {
    thread_id: thread.thread_id,
    checkpoint_ns: "",
    checkpoint_id: thread.checkpoint_id,
    checkpoint_map: null,
  },
  metadata: {},
  created_at: thread.state_updated_at,
  parent_checkpoint: null,
  interrupts: [] as unknown[],
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

/** Past states, newest first, in the shape of GET state (SDK threads.getHistory). */
export function historyView(thread: ThreadRecord, checkpoints: readonly Checkpoint[]) {
  const all = thread.history ?? [];
  return checkpoints.map((checkpoint) => {
    const index = all.indexOf(checkpoint);
    const parent = index > 0 ? all[index - 1] : undefined;
    return {
      values: { messages: checkpoint.values.messages.map((message) => ({ ...message })) },
      next: [] as string[],
      tasks: [] as unknown[],
      checkpoint: checkpointRef(thread, checkpoint.checkpoint_id),
      metadata: { source: "loop", step: index, run_id: checkpoint.run_id },
      created_at: checkpoint.created_at,
      parent_checkpoint: parent === undefined ? null : checkpointRef(thread, parent.checkpoint_id),
      interrupts: [] as unknown[],
    };
  });
}
