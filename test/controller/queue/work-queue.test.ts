import { describe, expect, it } from "vitest";
import type { WorkItem } from "../../../src/controller/queue/schedule.js";
import { startWorkQueue } from "../../../src/controller/queue/work-queue.js";
import { manualTimers } from "../manual-timers.js";

// random 0.5: each retry waits half its ceiling (full jitter pinned).
const base = {
  concurrency: 2,
  debounceMs: 100,
  backoffBaseMs: 1000,
  backoffMaxMs: 4000,
  random: () => 0.5,
};

function deferred() {
  let resolve!: (ok: boolean) => void;
  const promise = new Promise<boolean>((r) => (resolve = r));
  return { promise, resolve };
}

describe("startWorkQueue", () => {
  it("turns a burst of saves into one run after the debounce", async () => {
    const timers = manualTimers();
    const runs: WorkItem[] = [];
    const q = startWorkQueue({ ...base, timers, worker: async (item) => (runs.push(item), true) });
    q.enqueue("a", "change");
    await timers.advance(60);
    q.enqueue("a", "change");
    await timers.advance(60);
    expect(runs).toEqual([]);
    await timers.advance(50);
    expect(runs).toEqual([{ key: "a", reason: "change", attempt: 0 }]);
    await timers.advance(10_000);
    expect(runs).toHaveLength(1);
  });

  it("retries a failing item with growing delays", async () => {
    const timers = manualTimers();
    const at: number[] = [];
    const q = startWorkQueue({
      ...base,
      debounceMs: 0,
      timers,
      worker: async () => (at.push(timers.now()), false),
    });
    q.enqueue("a", "drift");
    await timers.advance(4000);
    expect(at).toEqual([0, 500, 1500, 3500]);
    expect(q.failures("a")).toBe(4);
  });

  it("lets every finished run go: running counts only what is in flight", async () => {
    const timers = manualTimers();
    const gate = deferred();
    const q = startWorkQueue({
      ...base,
      concurrency: 4,
      debounceMs: 0,
      timers,
      worker: async (item) => (item.key === "slow" ? gate.promise : true),
    });
    for (let i = 0; i < 50; i++) q.enqueue(`k${i}`, "change");
    q.enqueue("slow", "change");
    await timers.advance(0);
    await timers.advance(0);
    expect(q.stats()).toMatchObject({ running: 1, pending: 0 });
    gate.resolve(true);
    await q.idle();
    await timers.advance(0);
    expect(q.stats()).toEqual({ pending: 0, running: 0, backingOff: 0 });
  });

  it("treats a thrown error as a failure", async () => {
    const timers = manualTimers();
    let calls = 0;
    const q = startWorkQueue({
      ...base,
      debounceMs: 0,
      timers,
      worker: async () => {
        calls++;
        throw new Error("boom");
      },
    });
    q.enqueue("a", "change");
    await timers.advance(0);
    expect(calls).toBe(1);
    expect(q.failures("a")).toBe(1);
  });

  it("on stop waits for running work, takes nothing new, and aborts after the grace period", async () => {
    const timers = manualTimers();
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const started: string[] = [];
    const q = startWorkQueue({
      ...base,
      concurrency: 1,
      debounceMs: 0,
      timers,
      worker: async (item, signal) => {
        started.push(item.key);
        signals.push(signal);
        return gate.promise;
      },
    });
    q.enqueue("a", "change");
    q.enqueue("b", "change");
    await timers.advance(0);
    const stopped = q.stop(500);
    q.enqueue("c", "change");
    await timers.advance(499);
    expect(signals[0]!.aborted).toBe(false);
    await timers.advance(1);
    expect(signals[0]!.aborted).toBe(true);
    gate.resolve(false);
    expect(await stopped).toBe(true);
    expect(started).toEqual(["a"]);
  });

  it("idle resolves once nothing runs", async () => {
    const timers = manualTimers();
    const gate = deferred();
    const q = startWorkQueue({ ...base, debounceMs: 0, timers, worker: () => gate.promise });
    q.enqueue("a", "change");
    let idle = false;
    void q.idle().then(() => (idle = true));
    await timers.advance(0);
    expect(idle).toBe(false);
    gate.resolve(true);
    await timers.advance(0);
    expect(idle).toBe(true);
  });

  it("retries when its timer fires a millisecond before the clock reaches the retry time", async () => {
    // Node's timers can fire a millisecond before Date.now reaches their time: here each timer
    // fires at its time - 1 and the clock reaches its time right after the first reading.
    let t = 0;
    let reached: number | undefined;
    const due = new Map<number, { at: number; fn: () => void }>();
    let id = 0;
    const timers = {
      now() {
        const read = t;
        if (reached !== undefined) [t, reached] = [reached, undefined];
        return read;
      },
      setTimeout(fn: () => void, ms: number) {
        const key = id++;
        due.set(key, { at: t + ms, fn });
        return () => void due.delete(key);
      },
    };
    const runs: number[] = [];
    const q = startWorkQueue({
      ...base,
      debounceMs: 0,
      backoffBaseMs: 50,
      timers,
      worker: async () => (runs.push(t), runs.length > 1),
    });
    q.enqueue("a", "drift");
    for (let fired = 0; fired < 100 && runs.length < 2; fired++) {
      for (let i = 0; i < 10; i++) await Promise.resolve();
      const [key, next] = [...due].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
      if (key === undefined || !next) break;
      due.delete(key);
      t = Math.max(t, next.at - 1);
      reached = Math.max(t, next.at);
      next.fn();
    }
    expect(runs).toEqual([0, 25]);
  });
});
