import type { Clock } from "../../../clock.js";
import { current, saveCheckpoint } from "../threads/checkpoints.js";
import { runNode } from "../graph.js";
import { beginRun, finishRun, type RunPlan } from "./run-plan.js";
import {
  isInProgress,
  type PendingTask,
  type RunRecord,
  type RunStatus,
  type ThreadRecord,
} from "../types.js";

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
  /** `task`: the node the run is about to run, if any. */
  started(thread: ThreadRecord, run: RunRecord, task: PendingTask | undefined): void;
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

  const execute = async (thread: ThreadRecord, run: RunRecord, plan: RunPlan, signal: AbortSignal) => {
    try {
      // A run with no node to run (a breakpoint, nothing pending) ends at once.
      if (plan.node === null) await Promise.resolve();
      else await clock.sleep(runSeconds * 1000, signal);
    } catch {
      return; // stopped by cancel, a multitask strategy or shutdown: they already updated the records
    }
    if (stopped || run.status !== "running") return;
    const messages = thread.messages.map((stored) => stored.message);
    const outcome = plan.node === null ? null : runNode(plan.node, messages, plan.resume);
    const result = finishRun(thread, run, plan, outcome, iso());
    end(thread, run, result.status);
    pump(thread);
    onChange();
  };

  const start = (thread: ThreadRecord, run: RunRecord) => {
    run.status = "running";
    run.updated_at = run.started_at = iso();
    const plan = beginRun(thread, run, iso());
    observer?.started(thread, run, plan.node === null ? undefined : plan.task);
    const controller = new AbortController();
    controllers.set(run.run_id, controller);
    void execute(thread, run, plan, controller.signal);
  };

  /** Threads waiting for a delayed run (after_seconds) to be due. */
  const delays = new Map<ThreadRecord, AbortController>();
  const dueAt = (run: RunRecord) => (run.not_before === undefined ? 0 : Date.parse(run.not_before));

  /** Starts the oldest due pending run when nothing runs on the thread; else waits for the next due. */
  const pump = (thread: ThreadRecord) => {
    delays.get(thread)?.abort(new Error("rescheduled"));
    delays.delete(thread);
    if (stopped || thread.runs.some((run) => run.status === "running")) return;
    const pending = thread.runs.filter((run) => run.status === "pending");
    const now = clock.now();
    const next = pending.find((run) => dueAt(run) <= now);
    if (next !== undefined) return start(thread, next);
    if (pending.length === 0) return;
    const controller = new AbortController();
    delays.set(thread, controller);
    const wait = Math.min(...pending.map(dueAt)) - now;
    clock.sleep(wait, controller.signal).then(
      () => {
        if (delays.get(thread) !== controller) return;
        pump(thread);
        onChange();
      },
      () => undefined, // rescheduled, or stopped
    );
  };

  const stop = (thread: ThreadRecord, run: RunRecord, action: "interrupt" | "rollback") => {
    const wasRunning = run.status === "running";
    end(thread, run, "interrupted");
    // A cancelled run leaves no node due: the thread is not "interrupted" by a cancel.
    const last = current(thread);
    if (wasRunning && last?.run_id === run.run_id) last.tasks = [];
    if (action === "rollback") {
      thread.runs = thread.runs.filter((other) => other.run_id !== run.run_id);
      const before = thread.messages.length;
      thread.messages = thread.messages.filter((stored) => stored.run_id !== run.run_id);
      thread.history = thread.history?.filter((checkpoint) => checkpoint.run_id !== run.run_id);
      if (thread.messages.length !== before) {
        const next = (current(thread)?.tasks ?? []).map((task) => task.name);
        saveCheckpoint(thread, { runId: null, source: "update", next, at: iso() });
      }
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
      for (const controller of [...controllers.values(), ...delays.values()])
        controller.abort(new Error("state restored"));
      controllers.clear();
      delays.clear();
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
      for (const controller of [...controllers.values(), ...delays.values()])
        controller.abort(new Error("shutting down"));
      controllers.clear();
      delays.clear();
      for (const run of [...waiters.keys()]) {
        for (const resolve of waiters.get(run) ?? []) resolve();
      }
      waiters.clear();
    },
  };
}
