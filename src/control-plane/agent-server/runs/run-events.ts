import type { StreamMode } from "../validation.js";

/**
 * The events each run streams, kept in memory per run so a client can join late or resume after
 * a dropped connection (`Last-Event-ID`). Every event of the run is logged once, tagged with the
 * stream mode it belongs to; each connection filters the log by the modes it asked for.
 */

/** `always` events (metadata, error, end) reach every connection whatever its modes. */
type EventMode = StreamMode | "always";
export type RunEvent = { id: number; mode: EventMode; event: string; data: unknown };

type RunLog = {
  deploymentId: string;
  threadId: string;
  events: RunEvent[];
  /** True once `end` is logged: nothing more will come. */
  done: boolean;
  listeners: Set<() => void>;
};

export type RunEvents = {
  /** Starts the log of a new run with its `metadata` event. */
  open(deploymentId: string, threadId: string, runId: string, attempt: number): void;
  emit(runId: string, mode: EventMode, event: string, data: unknown): void;
  /** Forgets the log of a run that was refused after all (409). */
  drop(runId: string): void;
  /** Logs `end` and wakes every connection; the log stays for late joins until evicted. */
  close(runId: string): void;
  get(runId: string): RunLog | undefined;
  subscribe(runId: string, listener: () => void): () => void;
};

/** Logs of ended runs kept for late joins; older ones are dropped first. */
const ENDED_LOGS_KEPT = 1000;

/** Sees every event logged, and each refused run dropped (the thread streams: thread-events.ts). */
export type RunEventTap = {
  event(deploymentId: string, threadId: string, runId: string, event: RunEvent): void;
  drop(deploymentId: string, threadId: string, runId: string): void;
};

export function createRunEvents(keep = ENDED_LOGS_KEPT, tap?: RunEventTap): RunEvents {
  const logs = new Map<string, RunLog>();
  const ended: string[] = [];

  const wake = (log: RunLog) => {
    for (const listener of [...log.listeners]) listener();
  };
  const append = (runId: string, log: RunLog, mode: EventMode, event: string, data: unknown) => {
    if (log.done) return;
    const entry = { id: log.events.length + 1, mode, event, data };
    log.events.push(entry);
    tap?.event(log.deploymentId, log.threadId, runId, entry);
  };

  return {
    open(deploymentId, threadId, runId, attempt) {
      const log: RunLog = { deploymentId, threadId, events: [], done: false, listeners: new Set() };
      logs.set(runId, log);
      append(runId, log, "always", "metadata", { run_id: runId, attempt });
    },
    emit(runId, mode, event, data) {
      const log = logs.get(runId);
      if (log === undefined) return;
      append(runId, log, mode, event, data);
      wake(log);
    },
    drop(runId) {
      const log = logs.get(runId);
      logs.delete(runId);
      if (log !== undefined) tap?.drop(log.deploymentId, log.threadId, runId);
    },
    close(runId) {
      const log = logs.get(runId);
      if (log === undefined || log.done) return;
      append(runId, log, "always", "end", null);
      log.done = true;
      wake(log);
      ended.push(runId);
      while (ended.length > keep) logs.delete(ended.shift()!);
    },
    get: (runId) => logs.get(runId),
    subscribe(runId, listener) {
      const log = logs.get(runId);
      if (log === undefined) return () => undefined;
      log.listeners.add(listener);
      return () => log.listeners.delete(listener);
    },
  };
}
