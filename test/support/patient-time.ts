import type { Clock } from "../../src/clock.js";

/**
 * A waiter's time that passes only as it waits: every sleep passes at once on its own clock and
 * monotonic clock, so it watches a lease run out without a real wait (`waited()` says how long).
 */
export function patientTime() {
  let now = 0;
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return { clock, monotonic: () => now, waited: () => now };
}
