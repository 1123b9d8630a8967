import type { Timers } from "./work-queue.js";

// File events → rescans, adaptively. A save after a quiet spell rescans almost at once (after
// SETTLE_MS, which groups the few events one save makes: write, rename, chmod); events that keep
// coming less than `quietMs` apart (a checkout, a script, an editor saving many files) are a burst,
// coalesced into one rescan `quietMs` after the last. A fixed debounce made every save wait
// `quietMs` (p95 save → PATCH ~210 ms with the 200 ms default); now a single save pays ~SETTLE_MS.

/** How long the first event waits for the rest of its save's events. */
export const SETTLE_MS = 10;

export type FileDebounce = { event(): void; cancel(): void };

export function createFileDebounce(options: {
  timers: Timers;
  quietMs: number;
  settleMs?: number;
  run: () => void;
}): FileDebounce {
  const { timers, quietMs, run } = options;
  const settleMs = Math.min(options.settleMs ?? SETTLE_MS, quietMs);
  let lastEvent = Number.NEGATIVE_INFINITY;
  let cancelPending: (() => void) | undefined;
  return {
    event() {
      const now = timers.now();
      const inBurst = now - lastEvent < quietMs;
      lastEvent = now;
      cancelPending?.();
      cancelPending = timers.setTimeout(
        () => {
          cancelPending = undefined;
          run();
        },
        inBurst ? quietMs : settleMs,
      );
    },
    cancel() {
      cancelPending?.();
      cancelPending = undefined;
    },
  };
}
