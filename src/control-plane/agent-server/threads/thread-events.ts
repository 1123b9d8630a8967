import type { RunEvent } from "../runs/run-events.js";

/**
 * The events of a thread's stream (SDK `threads.joinStream`, docs/control-plane.md "Thread
 * stream"): every event of every run on the thread, in order, numbered per thread so a client
 * can resume after `Last-Event-ID`; a run's `end` becomes `metadata {status: "run_done",
 * run_id}` (the stream stays open for the next run), and a state edit adds `state_update
 * {state, thread_id}`, as the hosted agent server sends them. Kept in memory, bounded.
 */

export type ThreadEvent = {
  id: number;
  /** The run it came from; undefined for a state edit. */
  runId: string | undefined;
  mode: RunEvent["mode"] | "state_update";
  event: string;
  data: unknown;
};

type ThreadLog = { events: ThreadEvent[]; next: number; listeners: Set<() => void>; deleted: boolean };

export type ThreadEvents = {
  fromRun(deploymentId: string, threadId: string, runId: string, event: RunEvent): void;
  stateUpdated(deploymentId: string, threadId: string, state: unknown): void;
  /** Forgets a refused run's events; connections are woken later in the tick, so never see them. */
  dropRun(deploymentId: string, threadId: string, runId: string): void;
  /** The thread is deleted: its open streams end. */
  forget(deploymentId: string, threadId: string): void;
  /** The log, created empty when the thread has none yet (a join waits for its first run). */
  log(
    deploymentId: string,
    threadId: string,
  ): { readonly events: readonly ThreadEvent[]; readonly deleted: boolean };
  subscribe(deploymentId: string, threadId: string, listener: () => void): () => void;
};

/** Events kept per thread, and threads whose events are kept (those streamed to last). */
const EVENTS_KEPT = 1000;
const THREADS_KEPT = 1000;

export function createThreadEvents(eventsKept = EVENTS_KEPT, threadsKept = THREADS_KEPT): ThreadEvents {
  const logs = new Map<string, ThreadLog>();
  const keyOf = (deploymentId: string, threadId: string) => `${deploymentId}/${threadId}`;

  const logOf = (deploymentId: string, threadId: string): ThreadLog => {
    const key = keyOf(deploymentId, threadId);
    let log = logs.get(key);
    if (log !== undefined) logs.delete(key); // re-inserted below: the map stays in order of use
    log ??= { events: [], next: 1, listeners: new Set(), deleted: false };
    logs.set(key, log);
    for (const [oldKey, old] of logs) {
      if (logs.size <= threadsKept) break;
      if (old.listeners.size === 0) logs.delete(oldKey);
    }
    return log;
  };
  // Woken once per tick, after the request that wrote the events has finished with them.
  const wake = (log: ThreadLog) =>
    queueMicrotask(() => {
      for (const listener of [...log.listeners]) listener();
    });
  const append = (log: ThreadLog, entry: Omit<ThreadEvent, "id">) => {
    log.events.push({ id: log.next++, ...entry });
    if (log.events.length > eventsKept) log.events.splice(0, log.events.length - eventsKept);
    wake(log);
  };

  return {
    fromRun(deploymentId, threadId, runId, { mode, event, data }) {
      const log = logOf(deploymentId, threadId);
      if (event === "end")
        append(log, {
          runId,
          mode: "always",
          event: "metadata",
          data: { status: "run_done", run_id: runId },
        });
      else append(log, { runId, mode, event, data });
    },
    stateUpdated(deploymentId, threadId, state) {
      const data = { state, thread_id: threadId };
      append(logOf(deploymentId, threadId), {
        runId: undefined,
        mode: "state_update",
        event: "state_update",
        data,
      });
    },
    dropRun(deploymentId, threadId, runId) {
      const log = logs.get(keyOf(deploymentId, threadId));
      if (log !== undefined) log.events = log.events.filter((event) => event.runId !== runId);
    },
    forget(deploymentId, threadId) {
      const key = keyOf(deploymentId, threadId);
      const log = logs.get(key);
      logs.delete(key);
      if (log === undefined) return;
      log.deleted = true;
      wake(log);
    },
    log: logOf,
    subscribe(deploymentId, threadId, listener) {
      const log = logOf(deploymentId, threadId);
      log.listeners.add(listener);
      return () => log.listeners.delete(listener);
    },
  };
}
