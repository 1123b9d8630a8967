import { GRAPH_ID } from "../graph.js";
import type { RunEvents } from "../runs/run-events.js";
import type { Checkpoint, PendingTask, RunRecord, ThreadRecord } from "../types.js";
import { runError } from "../views.js";

/**
 * The `checkpoints`, `tasks`, `debug` and `events` stream modes, in LangGraph's shapes: a
 * `checkpoints` frame for each checkpoint the run writes, `tasks` frames when its node starts
 * and ends (with its error or interrupts), `debug` frames wrapping both
 * (`{type: "checkpoint" | "task" | "task_result", timestamp, step, payload}`), and LangChain's
 * `on_chain_start` / `on_chain_end` events for the graph and its node.
 */

export type StreamFrames = {
  started(thread: ThreadRecord, run: RunRecord, task: PendingTask | undefined): void;
  ended(thread: ThreadRecord, run: RunRecord): void;
};

const config = (thread: ThreadRecord, checkpointId: string) => ({
  configurable: { thread_id: thread.thread_id, checkpoint_ns: "", checkpoint_id: checkpointId },
});

function checkpointFrame(thread: ThreadRecord, checkpoint: Checkpoint) {
  const parent = checkpoint.parent_checkpoint_id;
  return {
    config: config(thread, checkpoint.checkpoint_id),
    parent_config: parent === undefined || parent === null ? null : config(thread, parent),
    values: structuredClone(checkpoint.values),
    metadata: { source: checkpoint.source ?? "loop", step: checkpoint.step ?? 0, parents: {} },
    next: (checkpoint.tasks ?? []).map((task) => task.name),
    tasks: (checkpoint.tasks ?? []).map((task) => ({
      id: task.id,
      name: task.name,
      interrupts: structuredClone(task.interrupts),
      state: null,
    })),
  };
}

export function createStreamFrames(events: RunEvents, now: () => string): StreamFrames {
  const runs = new Map<string, { seen: Set<string>; task: PendingTask | undefined }>();
  const ofRun = (thread: ThreadRecord, run: RunRecord) =>
    (thread.history ?? []).filter((checkpoint) => checkpoint.run_id === run.run_id);
  const emitCheckpoint = (thread: ThreadRecord, run: RunRecord, checkpoint: Checkpoint) => {
    const payload = checkpointFrame(thread, checkpoint);
    events.emit(run.run_id, "checkpoints", "checkpoints", payload);
    const step = checkpoint.step ?? 0;
    events.emit(run.run_id, "debug", "debug", { type: "checkpoint", timestamp: now(), step, payload });
  };
  const chainEvent = (run: RunRecord, event: string, name: string, data: Record<string, unknown>) =>
    events.emit(run.run_id, "events", "events", {
      event,
      name,
      run_id: run.run_id,
      tags: name === GRAPH_ID ? [] : ["graph:step:1"],
      metadata: { graph_id: GRAPH_ID, assistant_id: run.assistant_id, thread_id: run.thread_id },
      data,
      parent_ids: [],
    });
  const values = (thread: ThreadRecord) => ({ messages: thread.messages.map((s) => ({ ...s.message })) });

  return {
    started(thread, run, task) {
      chainEvent(run, "on_chain_start", GRAPH_ID, { input: values(thread) });
      const written = ofRun(thread, run);
      for (const checkpoint of written) emitCheckpoint(thread, run, checkpoint);
      runs.set(run.run_id, { seen: new Set(written.map((c) => c.checkpoint_id)), task });
      if (task === undefined) return;
      const payload = {
        id: task.id,
        name: task.name,
        input: values(thread),
        triggers: [`branch:to:${task.name}`],
      };
      events.emit(run.run_id, "tasks", "tasks", payload);
      const step = written.at(-1)?.step ?? 0;
      events.emit(run.run_id, "debug", "debug", { type: "task", timestamp: now(), step, payload });
      chainEvent(run, "on_chain_start", task.name, { input: values(thread) });
    },
    ended(thread, run) {
      const state = runs.get(run.run_id);
      runs.delete(run.run_id);
      const task = state?.task;
      const fresh = ofRun(thread, run).filter((c) => !(state?.seen.has(c.checkpoint_id) ?? false));
      if (task !== undefined && run.status !== "interrupted") {
        const failed = run.status === "error" || run.status === "timeout";
        const raised = thread.history?.at(-1)?.tasks?.find((t) => t.id === task.id)?.interrupts ?? [];
        const writes = fresh.at(-1)?.writes?.[task.name] as { messages?: unknown[] } | undefined;
        const payload = {
          id: task.id,
          name: task.name,
          error: failed ? runError(run).message : null,
          result: [["messages", structuredClone(writes?.messages ?? [])]],
          interrupts: structuredClone(raised),
        };
        events.emit(run.run_id, "tasks", "tasks", payload);
        const step = fresh.at(-1)?.step ?? 0;
        events.emit(run.run_id, "debug", "debug", { type: "task_result", timestamp: now(), step, payload });
        chainEvent(run, "on_chain_end", task.name, { output: writes ?? {} });
      }
      for (const checkpoint of fresh) emitCheckpoint(thread, run, checkpoint);
      if (run.status === "success") chainEvent(run, "on_chain_end", GRAPH_ID, { output: values(thread) });
    },
  };
}
