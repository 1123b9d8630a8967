import type { Timers } from "./work-queue.js";

// File events → rescans, adaptively. A save rescans almost at once: its first event waits
// SETTLE_MS for the few others one save makes (write, rename, chmod), and for chokidar's change
// throttle: it reports a file's first change and drops the file's further changes for 50 ms, so
// a rescan sooner than that could read an early save of a quick series and never hear of the last. More than SAVE_EVENTS events
// that close together are a burst (a checkout, a script, a formatter over the tree): the rescan
// then waits until `quietMs` have passed without an event, so a half-written tree is not applied.
// A fixed debounce made every save wait `quietMs` (p95 save → PATCH ~210 ms with the 200 ms
// default); now a save pays ~SETTLE_MS, and saves one after another each rescan quickly.

/** How long the first event waits for the rest of its save's events. */
export const SETTLE_MS = 60;
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
