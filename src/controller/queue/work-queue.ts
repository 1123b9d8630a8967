import { setMaxListeners } from "node:events";
import { type ScheduleOptions, type WorkItem, type WorkReason, WorkSchedule } from "./schedule.js";

/** Timers the queue uses; injected so tests advance time by hand. */
export type Timers = {
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels it. */
  setTimeout(fn: () => void, ms: number): () => void;
};

export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** Runs one item; resolves true on success. `signal` aborts when shutdown gives up waiting. */
export type Worker = (item: WorkItem, signal: AbortSignal) => Promise<boolean>;

export type WorkQueue = {
  enqueue(key: string, reason: WorkReason): void;
  cancel(key: string): void;
  /** The schedule's counts; `running` is the reconciles the queue holds (its metric and page figure). */
  stats(): ReturnType<WorkSchedule["stats"]>;
  failures(key: string): number;
  /** Resolves when nothing is running or pending-and-ready (test and demo helper). */
  idle(): Promise<void>;
  /**
   * Stops taking work and waits for running items. After `graceMs` it aborts them and waits
   * `graceMs` more at most. Resolves true when every running item finished.
   */
  stop(graceMs: number): Promise<boolean>;
};

export function startWorkQueue(options: ScheduleOptions & { timers?: Timers; worker: Worker }): WorkQueue {
  const abort = new AbortController();
  // Every request in flight listens on this one signal: many listeners are expected, not a leak.
  setMaxListeners(0, abort.signal);
  const q: QueueState = {
    timers: options.timers ?? systemTimers,
    worker: options.worker,
    schedule: new WorkSchedule(options),
    abort,
    tasks: new Set(),
    stopping: false,
    cancelWake: undefined,
    wakeAt: undefined,
    idleWaiters: [],
  };
  const { schedule, timers, tasks } = q;
  return {
    enqueue(key, reason) {
      if (q.stopping) return;
      schedule.enqueue(key, reason, timers.now());
      pump(q);
    },
    cancel: (key) => schedule.cancel(key),
    // Counted from the tasks held, not the schedule: a finished task the queue failed to let go
    // would show as running for ever (in /metrics and on the page) instead of leaking unseen.
    stats: () => ({ ...schedule.stats(), running: tasks.size }),
    failures: (key) => schedule.failures(key),
    idle() {
      return new Promise((resolve) => {
        q.idleWaiters.push(resolve);
        notifyIdle(q);
      });
    },
    stop: (graceMs) => stop(q, graceMs),
  };
}

/** What the queue's functions share: the schedule, the tasks running, the wake-up timer, idle waiters. */
type QueueState = {
  timers: Timers;
  worker: Worker;
  schedule: WorkSchedule;
  abort: AbortController;
  tasks: Set<Promise<void>>;
  stopping: boolean;
  cancelWake: (() => void) | undefined;
  wakeAt: number | undefined;
  idleWaiters: Array<() => void>;
};

function notifyIdle(q: QueueState): void {
  if (q.idleWaiters.length === 0) return;
  const next = q.schedule.nextWakeAt();
  const readyNow = next !== undefined && next <= q.timers.now() && !q.stopping;
  if (q.schedule.stats().running > 0 || readyNow) return;
  const waiters = q.idleWaiters;
  q.idleWaiters = [];
  for (const resolve of waiters) resolve();
}

/** `now`: the time take() just used. A second reading could be later (a timer fires a millisecond
 * before Date.now reaches its time): an item take() found not ready would then look ready here,
 * get no timer, and wait for whatever pumps next, forever if nothing does. */
function arm(q: QueueState, now: number): void {
  let next = q.stopping ? undefined : q.schedule.nextWakeAt();
  // Ready but not started means every slot is busy: a completion pumps again, no timer needed.
  if (next !== undefined && next <= now) next = undefined;
  if (next === q.wakeAt) return;
  q.cancelWake?.();
  q.cancelWake = undefined;
  q.wakeAt = next;
  if (next === undefined) return;
  q.cancelWake = q.timers.setTimeout(
    () => {
      q.wakeAt = undefined;
      q.cancelWake = undefined;
      pump(q);
    },
    Math.max(0, next - q.timers.now()),
  );
}

async function run(q: QueueState, item: WorkItem): Promise<void> {
  let ok: boolean;
  try {
    ok = await q.worker(item, q.abort.signal);
  } catch {
    ok = false; // the worker reports its own errors; the schedule only needs the outcome
  }
  q.schedule.complete(item, ok, q.timers.now());
  pump(q);
}

function pump(q: QueueState): void {
  const now = q.timers.now();
  if (!q.stopping) {
    for (const item of q.schedule.take(now)) {
      const task = run(q, item);
      q.tasks.add(task);
      void task.finally(() => q.tasks.delete(task));
    }
  }
  arm(q, now);
  notifyIdle(q);
}

async function stop(q: QueueState, graceMs: number): Promise<boolean> {
  q.stopping = true;
  arm(q, q.timers.now());
  const all = Promise.all(q.tasks).then(() => true);
  const timeout = (ms: number) =>
    new Promise<false>((resolve) => {
      q.timers.setTimeout(() => resolve(false), ms);
    });
  if (await Promise.race([all, timeout(graceMs)])) return true;
  q.abort.abort(new Error("controller is shutting down"));
  return Promise.race([all, timeout(graceMs)]);
}
