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

export function createScheduler(options: SchedulerOptions): Scheduler {
  const s: SchedulerState = {
    ...options,
    controllers: new Map(),
    waiters: new Map(),
    delays: new Map(),
    stopped: false,
  };
  return {
    submit: (thread, run) => submit(s, thread, run),
    cancel(thread, run, action) {
      if (!isInProgress(run)) return;
      stop(s, thread, run, action);
      pump(s, thread);
    },
    discard(thread) {
      for (const run of thread.runs.filter(isInProgress)) end(s, thread, run, "interrupted");
    },
    settled(run) {
      if (!isInProgress(run)) return Promise.resolve();
      return new Promise((resolve) => {
        s.waiters.set(run.run_id, [...(s.waiters.get(run.run_id) ?? []), resolve]);
      });
    },
    resume: (threads) => resume(s, threads),
    shutdown() {
      s.stopped = true;
      abortTimers(s, "shutting down");
      for (const run of [...s.waiters.keys()]) {
        for (const resolve of s.waiters.get(run) ?? []) resolve();
      }
      s.waiters.clear();
    },
  };
}

/** What the scheduler's functions share: its options, the runtime-only timers and waiters. */
type SchedulerState = SchedulerOptions & {
  /** Running runs' sleeps, by run id. */
  controllers: Map<string, AbortController>;
  /** settled() callers, by run id. */
  waiters: Map<string, Array<() => void>>;
  /** Threads waiting for a delayed run (after_seconds) to be due. */
  delays: Map<ThreadRecord, AbortController>;
  stopped: boolean;
};

const isoOf = (s: SchedulerState) => new Date(s.clock.now()).toISOString();

function wake(s: SchedulerState, run: RunRecord): void {
  const pending = s.waiters.get(run.run_id) ?? [];
  s.waiters.delete(run.run_id);
  for (const resolve of pending) resolve();
}

function end(s: SchedulerState, thread: ThreadRecord, run: RunRecord, status: RunStatus): void {
  s.controllers.get(run.run_id)?.abort(new Error("run stopped"));
  s.controllers.delete(run.run_id);
  run.status = status;
  run.updated_at = thread.updated_at = isoOf(s);
  s.observer?.ended(thread, run);
  wake(s, run);
}

async function execute(
  s: SchedulerState,
  thread: ThreadRecord,
  run: RunRecord,
  plan: RunPlan,
  signal: AbortSignal,
): Promise<void> {
  try {
    // A run with no node to run (a breakpoint, nothing pending) ends at once.
    if (plan.node === null) await Promise.resolve();
    else await s.clock.sleep(s.runSeconds * 1000, signal);
  } catch {
    return; // stopped by cancel, a multitask strategy or shutdown: they already updated the records
  }
  if (s.stopped || run.status !== "running") return;
  const messages = thread.messages.map((stored) => stored.message);
  const outcome = plan.node === null ? null : runNode(plan.node, messages, plan.resume);
  const result = finishRun(thread, run, plan, outcome, isoOf(s));
  end(s, thread, run, result.status);
  pump(s, thread);
  s.onChange();
}

function start(s: SchedulerState, thread: ThreadRecord, run: RunRecord): void {
  run.status = "running";
  run.updated_at = run.started_at = isoOf(s);
  const plan = beginRun(thread, run, isoOf(s));
  s.observer?.started(thread, run, plan.node === null ? undefined : plan.task);
  const controller = new AbortController();
  s.controllers.set(run.run_id, controller);
  void execute(s, thread, run, plan, controller.signal);
}

const dueAt = (run: RunRecord) => (run.not_before === undefined ? 0 : Date.parse(run.not_before));

/** Starts the oldest due pending run when nothing runs on the thread; else waits for the next due. */
function pump(s: SchedulerState, thread: ThreadRecord): void {
  s.delays.get(thread)?.abort(new Error("rescheduled"));
  s.delays.delete(thread);
  if (s.stopped || thread.runs.some((run) => run.status === "running")) return;
  const pending = thread.runs.filter((run) => run.status === "pending");
  const now = s.clock.now();
  const next = pending.find((run) => dueAt(run) <= now);
  if (next !== undefined) return start(s, thread, next);
  if (pending.length === 0) return;
  const controller = new AbortController();
  s.delays.set(thread, controller);
  const wait = Math.min(...pending.map(dueAt)) - now;
  s.clock.sleep(wait, controller.signal).then(
    () => {
      if (s.delays.get(thread) !== controller) return;
      pump(s, thread);
      s.onChange();
    },
    () => undefined, // rescheduled, or stopped
  );
}

function stop(
  s: SchedulerState,
  thread: ThreadRecord,
  run: RunRecord,
  action: "interrupt" | "rollback",
): void {
  const wasRunning = run.status === "running";
  end(s, thread, run, "interrupted");
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
      saveCheckpoint(thread, { runId: null, source: "update", next, at: isoOf(s) });
    }
  }
}

function submit(s: SchedulerState, thread: ThreadRecord, run: RunRecord): "accepted" | "conflict" {
  const active = thread.runs.filter(isInProgress);
  if (active.length > 0) {
    if (run.multitask_strategy === "reject") return "conflict";
    if (run.multitask_strategy === "interrupt" || run.multitask_strategy === "rollback") {
      for (const earlier of active) stop(s, thread, earlier, run.multitask_strategy);
    }
  }
  thread.runs.push(run);
  thread.updated_at = isoOf(s);
  pump(s, thread);
  return "accepted";
}

function abortTimers(s: SchedulerState, reason: string): void {
  for (const controller of [...s.controllers.values(), ...s.delays.values()])
    controller.abort(new Error(reason));
  s.controllers.clear();
  s.delays.clear();
}

function resume(s: SchedulerState, threads: readonly ThreadRecord[]): void {
  abortTimers(s, "state restored");
  s.stopped = false;
  for (const thread of threads) {
    for (const run of thread.runs.filter((candidate) => candidate.status === "running")) {
      // Its partial output is dropped; it runs again from its input, in its original place.
      thread.messages = thread.messages.filter((stored) => stored.run_id !== run.run_id);
      thread.history = thread.history?.filter((checkpoint) => checkpoint.run_id !== run.run_id);
      run.status = "pending";
    }
    pump(s, thread);
  }
}
