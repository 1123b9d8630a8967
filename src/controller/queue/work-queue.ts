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
  const timers = options.timers ?? systemTimers;
  const schedule = new WorkSchedule(options);
  const abort = new AbortController();
  // Every request in flight listens on this one signal: many listeners are expected, not a leak.
  setMaxListeners(0, abort.signal);
  const tasks = new Set<Promise<void>>();
  let stopping = false;
  let cancelWake: (() => void) | undefined;
  let wakeAt: number | undefined;
  let idleWaiters: Array<() => void> = [];

  const notifyIdle = () => {
    if (idleWaiters.length === 0) return;
    const next = schedule.nextWakeAt();
    const readyNow = next !== undefined && next <= timers.now() && !stopping;
    if (schedule.stats().running > 0 || readyNow) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  /** `now`: the time take() just used. A second reading could be later (a timer fires a millisecond
   * before Date.now reaches its time): an item take() found not ready would then look ready here,
   * get no timer, and wait for whatever pumps next, forever if nothing does. */
  const arm = (now: number) => {
    let next = stopping ? undefined : schedule.nextWakeAt();
    // Ready but not started means every slot is busy: a completion pumps again, no timer needed.
    if (next !== undefined && next <= now) next = undefined;
    if (next === wakeAt) return;
    cancelWake?.();
    cancelWake = undefined;
    wakeAt = next;
    if (next === undefined) return;
    cancelWake = timers.setTimeout(
      () => {
        wakeAt = undefined;
        cancelWake = undefined;
        pump();
      },
      Math.max(0, next - timers.now()),
    );
  };

  const run = async (item: WorkItem): Promise<void> => {
    let ok: boolean;
    try {
      ok = await options.worker(item, abort.signal);
    } catch {
      ok = false; // the worker reports its own errors; the schedule only needs the outcome
    }
    schedule.complete(item, ok, timers.now());
    pump();
  };

  function pump(): void {
    const now = timers.now();
    if (!stopping) {
      for (const item of schedule.take(now)) {
        const task = run(item);
        tasks.add(task);
        void task.finally(() => tasks.delete(task));
      }
    }
    arm(now);
    notifyIdle();
  }

  return {
    enqueue(key, reason) {
      if (stopping) return;
      schedule.enqueue(key, reason, timers.now());
      pump();
    },
    cancel: (key) => schedule.cancel(key),
    // Counted from the tasks held, not the schedule: a finished task the queue failed to let go
    // would show as running for ever (in /metrics and on the page) instead of leaking unseen.
    stats: () => ({ ...schedule.stats(), running: tasks.size }),
    failures: (key) => schedule.failures(key),
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        notifyIdle();
      });
    },
    async stop(graceMs) {
      stopping = true;
      arm(timers.now());
      const all = Promise.all(tasks).then(() => true);
      const timeout = (ms: number) =>
        new Promise<false>((resolve) => {
          timers.setTimeout(() => resolve(false), ms);
        });
      if (await Promise.race([all, timeout(graceMs)])) return true;
      abort.abort(new Error("controller is shutting down"));
      return Promise.race([all, timeout(graceMs)]);
    },
  };
}
