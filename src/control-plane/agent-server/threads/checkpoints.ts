import { randomUUID } from "node:crypto";
import { sameId } from "../../http/uuid.js";
import {
  HISTORY_KEPT,
  type Checkpoint,
  type CheckpointSource,
  type PendingTask,
  type StateMessage,
  type ThreadRecord,
} from "../types.js";

/**
 * A thread's checkpoints: every change of its state (an input, a node's output, an update, a
 * fork) is a new checkpoint in its history, numbered by step as LangGraph numbers them (the
 * first input is step -1), with the nodes due next. The newest one is the thread's state.
 */

export const current = (thread: ThreadRecord): Checkpoint | undefined => thread.history?.at(-1);

/** Nodes due from the thread's state (`next`), with the interrupts they raised. */
export const pendingTasks = (thread: ThreadRecord): PendingTask[] => current(thread)?.tasks ?? [];

const valuesOf = (thread: ThreadRecord): { messages: StateMessage[] } => ({
  messages: thread.messages.map((stored) => ({ ...stored.message })),
});

export type CheckpointWrite = {
  runId: string | null;
  source: CheckpointSource;
  next: readonly string[];
  at: string;
  writes?: Record<string, unknown> | null;
};

/** Records the thread's current messages as a new checkpoint whose `next` are the given nodes. */
export function saveCheckpoint(thread: ThreadRecord, write: CheckpointWrite): Checkpoint {
  const previous = current(thread);
  const step = previous?.step === undefined ? (previous === undefined ? -1 : 0) : previous.step + 1;
  const checkpoint: Checkpoint = {
    checkpoint_id: randomUUID(),
    created_at: write.at,
    run_id: write.runId,
    values: valuesOf(thread),
    tasks: write.next.map((name) => ({ id: randomUUID(), name, interrupts: [] })),
    source: write.source,
    step,
    parent_checkpoint_id: previous?.checkpoint_id ?? null,
    writes: write.writes ?? null,
  };
  thread.checkpoint_id = checkpoint.checkpoint_id;
  thread.state_updated_at = thread.updated_at = write.at;
  thread.history = [...(thread.history ?? []), checkpoint].slice(-HISTORY_KEPT);
  return checkpoint;
}

/** The thread's state goes back to a checkpoint of its history (a fork, or after a rollback). */
export function restoreState(thread: ThreadRecord, checkpoint: Checkpoint | undefined): void {
  // Messages keep the run that wrote them, so a later rollback of that run still removes them.
  const writer = new Map(thread.messages.map((stored) => [stored.message.id, stored.run_id]));
  thread.messages = (checkpoint?.values.messages ?? []).map((message) => ({
    run_id: writer.get(message.id) ?? checkpoint?.run_id ?? "",
    message: { ...message },
  }));
}

/** A checkpoint by id, in any spelling of a uuid (docs/control-plane.md "Ids"). */
export const findCheckpoint = (thread: ThreadRecord, checkpointId: string): Checkpoint | undefined => {
  const id = sameId(checkpointId);
  return thread.history?.find((checkpoint) => checkpoint.checkpoint_id === id);
};
