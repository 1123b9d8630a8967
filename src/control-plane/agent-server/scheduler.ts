import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.js";
import { runGraph } from "./graph.js";
import { HISTORY_KEPT, isInProgress, type RunRecord, type RunStatus, type ThreadRecord } from "./types.js";

/**
 * Runs the simulated graph: one run at a time per thread, the multitask strategies, cancel and
 * join. Runtime-only things (timers, waiters) live here; the records stay plain JSON.
 */
export type Scheduler = {
  /** Adds a run to the thread following its multitask strategy; "conflict" for `reject` on a busy thread. */
  submit(thread: ThreadRecord, run: RunRecord): "accepted" | "conflict";
  /** Stops a pending or running run; `rollback` also deletes it and its messages. */
  cancel(thread: ThreadRecord, run: RunRecord, action: "interrupt" | "rollback"): void;
  /** Stops every run of a thread that is about to be deleted. */
  discard(thread: ThreadRecord): void;
  /** Resolves once the run is no longer pending or running (or was deleted). */
  settled(run: RunRecord): Promise<void>;
  /** After a restore: runs that were in progress start again from their input. */
  resume(threads: readonly ThreadRecord[]): void;
  /** Stops timers without changing any record, so the runs resume after a restart. */
  shutdown(): void;
};

/** Told when a run starts (its input is in the state) and when it ends, for streaming. */
type RunObserver = {
  started(thread: ThreadRecord, run: RunRecord): void;
  ended(thread: ThreadRecord, run: RunRecord): void;
};

export type SchedulerOptions = {
  clock: Clock;
  runSeconds: number;
  observer?: RunObserver;
  /** Called after a change made in the background (a run started or ended); persists it. */
  onChange: () => void;
};

export function createScheduler({ clock, runSeconds, observer, onChange }: SchedulerOptions): Scheduler {
  const controllers = new Map<string, AbortController>();
  const waiters = new Map<string, Array<() => void>>();
  let stopped = false;

  const iso = () => new Date(clock.now()).toISOString();

  /** The state changed: a new checkpoint, kept in the thread's history. */
  const touchState = (thread: ThreadRecord, runId: string | null) => {
    thread.checkpoint_id = randomUUID();
    thread.state_updated_at = thread.updated_at = iso();
    const values = { messages: thread.messages.map((stored) => ({ ...stored.message })) };
    const checkpoint = { checkpoint_id: thread.checkpoint_id, created_at: iso(), run_id: runId, values };
    thread.history = [...(thread.history ?? []), checkpoint].slice(-HISTORY_KEPT);
  };

  const wake = (run: RunRecord) => {
    const pending = waiters.get(run.run_id) ?? [];
    waiters.delete(run.run_id);
    for (const resolve of pending) resolve();
  };

  const end = (thread: ThreadRecord, run: RunRecord, status: RunStatus) => {
    controllers.get(run.run_id)?.abort(new Error("run stopped"));
    controllers.delete(run.run_id);
    run.status = status;
    run.updated_at = thread.updated_at = iso();
    observer?.ended(thread, run);
    wake(run);
  };

  const execute = async (thread: ThreadRecord, run: RunRecord, signal: AbortSignal) => {
    try {
      await clock.sleep(runSeconds * 1000, signal);
    } catch {
      return; // stopped by cancel, a multitask strategy or shutdown: they already updated the records
    }
    if (stopped || run.status !== "running") return;
    const outcome = runGraph(thread.messages.map((stored) => stored.message));
    if (outcome.status === "success" && outcome.reply !== null) {
      thread.messages.push({
        run_id: run.run_id,
        message: { type: "ai", content: outcome.reply, id: randomUUID() },
      });
      touchState(thread, run.run_id);
    }
    if (outcome.status !== "success") run.error = outcome.error;
    end(thread, run, outcome.status);
    pump(thread);
    onChange();
  };

  const start = (thread: ThreadRecord, run: RunRecord) => {
    run.status = "running";
    run.updated_at = iso();
    if (run.input_messages.length > 0) {
      thread.messages.push(...run.input_messages.map((message) => ({ run_id: run.run_id, message })));
      touchState(thread, run.run_id);
    }
    observer?.started(thread, run);
    const controller = new AbortController();
    controllers.set(run.run_id, controller);
    void execute(thread, run, controller.signal);
  };

  /** Starts the oldest pending run when nothing runs on the thread. */
  const pump = (thread: ThreadRecord) => {
    if (stopped || thread.runs.some((run) => run.status === "running")) return;
    const next = thread.runs.find((run) => run.status === "pending");
    if (next !== undefined) start(thread, next);
  };

  const stop = (thread: ThreadRecord, run: RunRecord, action: "interrupt" | "rollback") => {
    end(thread, run, "interrupted");
    if (action === "rollback") {
      thread.runs = thread.runs.filter((other) => other.run_id !== run.run_id);
      const before = thread.messages.length;
      thread.messages = thread.messages.filter((stored) => stored.run_id !== run.run_id);
      thread.history = thread.history?.filter((checkpoint) => checkpoint.run_id !== run.run_id);
      if (thread.messages.length !== before) touchState(thread, null);
    }
  };

  return {
    submit(thread, run) {
      const active = thread.runs.filter(isInProgress);
      if (active.length > 0) {
        if (run.multitask_strategy === "reject") return "conflict";
        if (run.multitask_strategy === "interrupt" || run.multitask_strategy === "rollback") {
          for (const earlier of active) stop(thread, earlier, run.multitask_strategy);
        }
      }
      thread.runs.push(run);
      thread.updated_at = iso();
      pump(thread);
      return "accepted";
    },
    cancel(thread, run, action) {
      if (!isInProgress(run)) return;
      stop(thread, run, action);
      pump(thread);
    },
    discard(thread) {
      for (const run of thread.runs.filter(isInProgress)) end(thread, run, "interrupted");
    },
    settled(run) {
      if (!isInProgress(run)) return Promise.resolve();
      return new Promise((resolve) => {
        waiters.set(run.run_id, [...(waiters.get(run.run_id) ?? []), resolve]);
      });
    },
    resume(threads) {
      for (const controller of controllers.values()) controller.abort(new Error("state restored"));
      controllers.clear();
      stopped = false;
      for (const thread of threads) {
        for (const run of thread.runs.filter((candidate) => candidate.status === "running")) {
          // Its partial output is dropped; it runs again from its input, in its original place.
          thread.messages = thread.messages.filter((stored) => stored.run_id !== run.run_id);
          thread.history = thread.history?.filter((checkpoint) => checkpoint.run_id !== run.run_id);
          run.status = "pending";
        }
        pump(thread);
      }
    },
    shutdown() {
      stopped = true;
      for (const controller of controllers.values()) controller.abort(new Error("shutting down"));
      controllers.clear();
      for (const run of [...waiters.keys()]) {
        for (const resolve of waiters.get(run) ?? []) resolve();
      }
      waiters.clear();
    },
  };
}
