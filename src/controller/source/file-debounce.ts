import type { Timers } from "../queue/work-queue.js";

// File events → rescans, adaptively. A save rescans almost at once: its first event waits
// SETTLE_MS for the few others one save makes (an editor's write, rename and chmod arrive within a
// few milliseconds of each other). More than SAVE_EVENTS events that close together are a burst (a
// checkout, a script, a formatter over the tree): the rescan then waits until `quietMs` have passed
// without an event, so a half-written tree is not applied. A fixed debounce made every save wait
// `quietMs` (p95 save → PATCH ~210 ms with the 200 ms default); now a save pays ~SETTLE_MS, and saves
// one after another each rescan quickly (every save is an event: directory-source.ts drops none).

/** How long the first event waits for the rest of its save's events. */
export const SETTLE_MS = 25;
/** Events one save may make; more, each within SETTLE_MS of the last, are a burst. */
export const SAVE_EVENTS = 4;

export type FileDebounce = { event(): void; cancel(): void };

export function createFileDebounce(options: {
  timers: Timers;
  quietMs: number;
  settleMs?: number;
  run: () => void;
}): FileDebounce {
  const { timers, quietMs, run } = options;
  const settleMs = Math.min(options.settleMs ?? SETTLE_MS, quietMs);
  let cancelPending: (() => void) | undefined;
  let events = 0;
  const schedule = (ms: number) => {
    cancelPending?.();
    cancelPending = timers.setTimeout(() => {
      cancelPending = undefined;
      events = 0;
      run();
    }, ms);
  };
  return {
    event() {
      events += 1;
      schedule(events > SAVE_EVENTS ? quietMs : settleMs);
    },
    cancel() {
      cancelPending?.();
      cancelPending = undefined;
      events = 0;
    },
  };
}
