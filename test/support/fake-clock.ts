import { type Clock, systemClock } from "../../src/clock.js";

// A clock for waits tested without waiting: time moves only by its sleeps, which it records.

/** A clock whose sleeps return on the next turn of the event loop and move time forward; records them. */
export function fakeClock(start = 1_700_000_000_000): Clock & { sleeps: number[] } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      await new Promise((resolve) => setImmediate(resolve)); // let callers already woken run first
      now += ms;
    },
  };
}

/** The wall clock, frozen until open(): a local control plane's revisions stay in their first state. */
export function gatedClock(): Clock & { open(): void } {
  const frozenAt = Date.now();
  let opened = false;
  return {
    now: () => (opened ? Date.now() : frozenAt),
    sleep: systemClock.sleep,
    open: () => void (opened = true),
  };
}
