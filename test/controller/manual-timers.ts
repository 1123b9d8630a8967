import type { Timers } from "../../src/controller/queue/work-queue.js";

/** Hand-driven timers: time moves only through advance(), which fires due callbacks in order. */
export function manualTimers(start = 0): Timers & { advance(ms: number): Promise<void>; pending(): number } {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const flush = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = seq++;
      timers.set(id, { at: now + ms, fn });
      return () => timers.delete(id);
    },
    pending: () => timers.size,
    async advance(ms) {
      const target = now + ms;
      await flush();
      for (let fired = 0; ; fired++) {
        if (fired > 10_000) throw new Error("manualTimers: timer loop does not settle");
        const due = [...timers.entries()]
          .filter(([, t]) => t.at <= target)
          .sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await flush();
      }
      now = target;
      await flush();
    },
  };
}
