import { randomUUID } from "node:crypto";
import {
  current,
  findCheckpoint,
  pendingTasks,
  restoreState,
  saveCheckpoint,
} from "../threads/checkpoints.js";
import { firstNode, type GraphOutcome, type NodeName } from "../graph.js";
import { stopsAt } from "./run-options.js";
import type { Interrupt, PendingTask, RunRecord, ThreadRecord } from "../types.js";

/**
 * How one run moves the graph (docs/control-plane.md "Interrupts"): new input goes through START
 * to the first node; `input: null` continues the node the thread stopped at (with the resume
 * value of `command`); `command.update` adds messages, `command.goto` picks the node. A breakpoint
 * (`interrupt_before`) stops the run before a node it reached by new input; `interrupt_after`
 * stops it after the node has written its answer: every node leads to END, so nothing is due,
 * yet LangGraph raises the breakpoint and the open-source server shows the thread `interrupted`
 * (`stopped_after`); the `review` node interrupts until resumed.
 */

export type RunPlan = {
  /** The node to run, or null: nothing to run (no pending node, or a breakpoint stopped it). */
  node: NodeName | null;
  task: PendingTask | undefined;
  resume: { value: unknown } | undefined;
};

const nothing: RunPlan = { node: null, task: undefined, resume: undefined };

/** Applies the run's input, command and fork point to the thread; says which node runs next. */
export function beginRun(thread: ThreadRecord, run: RunRecord, at: string): RunPlan {
  const runId = run.run_id;
  const save = (source: "input" | "loop" | "fork", next: string[], writes?: Record<string, unknown>) =>
    saveCheckpoint(thread, { runId, source, next, at, writes: writes ?? null });
  const base = run.fork_from === undefined ? undefined : findCheckpoint(thread, run.fork_from);
  if (base !== undefined && base !== current(thread)) {
    restoreState(thread, base);
    const forked = save(
      "fork",
      (base.tasks ?? []).map((task) => task.name),
    );
    forked.parent_checkpoint_id = base.checkpoint_id;
    forked.tasks = structuredClone(base.tasks ?? []);
  }
  // Nothing continues after interrupt_after (nothing is due): the next run leaves it behind.
  if (current(thread)?.stopped_after !== undefined) delete current(thread)!.stopped_after;
  const stamp = (messages: RunRecord["input_messages"]) =>
    messages.map((message) => ({ run_id: runId, message }));

  if (!run.continues) {
    save("input", ["__start__"], { __start__: { messages: run.input_messages } });
    thread.messages.push(...stamp(run.input_messages));
    const node = firstNode(thread.messages.map((stored) => stored.message));
    const checkpoint = save("loop", [node]);
    if (stopsAt(run.interrupt_before, node)) return nothing;
    return { node, task: checkpoint.tasks?.[0], resume: undefined };
  }

  const command = run.command ?? {};
  const pending = pendingTasks(thread);
  if (command.update !== undefined) thread.messages.push(...stamp(command.update));
  const node = (command.goto ??
    pending[0]?.name ??
    (command.update !== undefined ? firstNode(thread.messages.map((s) => s.message)) : undefined)) as
    NodeName | undefined;
  let task = pending.find((candidate) => candidate.name === node);
  if (command.update !== undefined || command.goto !== undefined || task === undefined) {
    if (node === undefined) {
      if (command.update !== undefined) save("loop", [], { __input__: { messages: command.update } });
      return nothing;
    }
    task = save("loop", [node], command.update && { __input__: { messages: command.update } }).tasks?.[0];
  }
  if (node === undefined) return nothing;
  return { node, task, resume: command.resume };
}

export type RunEnd = { status: "success" | "error" | "timeout"; interrupts: Interrupt[] };

/** Writes the node's outcome to the thread: its answer and a checkpoint, or its interrupt. */
export function finishRun(
  thread: ThreadRecord,
  run: RunRecord,
  plan: RunPlan,
  outcome: GraphOutcome | null,
  at: string,
): RunEnd {
  if (outcome === null || plan.node === null) return { status: "success", interrupts: [] };
  if (outcome.status === "error" || outcome.status === "timeout") {
    run.error = outcome.error;
    return { status: outcome.status, interrupts: [] };
  }
  if (outcome.status === "interrupt") {
    // LangGraph keeps the interrupt with the task it stopped, on the same checkpoint.
    const interrupts = [{ value: outcome.value, id: randomUUID() }];
    const task = current(thread)?.tasks?.find((candidate) => candidate.id === plan.task?.id);
    if (task !== undefined) task.interrupts = interrupts;
    return { status: "success", interrupts };
  }
  const answer =
    outcome.reply === null ? [] : [{ type: "ai" as const, content: outcome.reply, id: randomUUID() }];
  thread.messages.push(...answer.map((message) => ({ run_id: run.run_id, message })));
  const written = saveCheckpoint(thread, {
    runId: run.run_id,
    source: "loop",
    next: [],
    at,
    writes: { [plan.node]: { messages: answer } },
  });
  if (stopsAt(run.interrupt_after, plan.node)) written.stopped_after = plan.task?.id ?? randomUUID();
  return { status: "success", interrupts: [] };
}
