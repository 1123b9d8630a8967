import { describe, expect, it } from "vitest";
import type { WorkItem } from "../../../src/controller/queue/schedule.js";
import { startWorkQueue, systemTimers, type Timers } from "../../../src/controller/queue/work-queue.js";
import { manualTimers } from "../manual-timers.js";

// The work queue's edges: idle(), stop(), cancel(), the timers it keeps, and the real timers.

const base = { concurrency: 1, debounceMs: 0, backoffBaseMs: 1000, backoffMaxMs: 4000, random: () => 0.5 };

function deferred() {
  let resolve!: (ok: boolean) => void;
  const promise = new Promise<boolean>((r) => (resolve = r));
  return { promise, resolve };
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** manualTimers, counting the timers set. */
function countingTimers() {
  const timers = manualTimers();
  let set = 0;
  const counted: typeof timers = {
    ...timers,
    setTimeout: (fn, ms) => {
      set += 1;
      return timers.setTimeout(fn, ms);
    },
  };
  return { timers: counted, set: () => set };
}

describe("startWorkQueue edges", () => {
  it("idle resolves while an item only waits for its debounce (nothing ready)", async () => {
    const timers = manualTimers();
    const q = startWorkQueue({ ...base, debounceMs: 100, timers, worker: async () => true });
    q.enqueue("a", "change");
    let idle = false;
    void q.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(true);
  });

  it("idle waits for an item that is ready but not started yet", async () => {
    // Time reaches the item's ready time before its timer fires.
    let now = 0;
    const due: Array<() => void> = [];
    const timers: Timers = { now: () => now, setTimeout: (fn) => (due.push(fn), () => undefined) };
    const runs: WorkItem[] = [];
    const q = startWorkQueue({ ...base, debounceMs: 100, timers, worker: async (i) => (runs.push(i), true) });
    q.enqueue("a", "change");
    now = 100;
    let idle = false;
    void q.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    due.shift()?.();
    await settle();
    expect(runs).toHaveLength(1);
    expect(idle).toBe(true);
  });

  it("idle can be waited for again after it resolved", async () => {
    const timers = manualTimers();
    const q = startWorkQueue({ ...base, timers, worker: async () => true });
    await q.idle();
    q.enqueue("a", "change");
    await timers.advance(0);
    await expect(q.idle()).resolves.toBeUndefined();
    await expect(q.idle()).resolves.toBeUndefined();
  });

  it("after stop, idle does not wait for items that will never start", async () => {
    const timers = manualTimers();
    const gate = deferred();
    const q = startWorkQueue({ ...base, timers, worker: () => gate.promise });
    q.enqueue("a", "change");
    q.enqueue("b", "change");
    await timers.advance(0);
    const stopped = q.stop(1_000);
    gate.resolve(true);
    expect(await stopped).toBe(true);
    let idle = false;
    void q.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(true);
  });

  it("stop resolves true when the running work finishes within the grace period, without aborting it", async () => {
    const timers = manualTimers();
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const q = startWorkQueue({ ...base, timers, worker: (_item, s) => ((signal = s), gate.promise) });
    q.enqueue("a", "change");
    await timers.advance(0);
    const stopped = q.stop(500);
    await timers.advance(100);
    gate.resolve(true);
    expect(await stopped).toBe(true);
    expect(signal?.aborted).toBe(false);
  });

  it("stop resolves false when aborted work outlives the second grace period, and says why it aborted", async () => {
    const timers = manualTimers();
    let signal: AbortSignal | undefined;
    const q = startWorkQueue({
      ...base,
      timers,
      worker: (_item, s) => ((signal = s), new Promise<boolean>(() => undefined)),
    });
    q.enqueue("a", "change");
    await timers.advance(0);
    const stopped = q.stop(500);
    await timers.advance(1_000);
    expect(await stopped).toBe(false);
    expect((signal?.reason as Error).message).toBe("controller is shutting down");
  });

  it("takes no work once stopping: an enqueue is dropped", async () => {
    const timers = manualTimers();
    const q = startWorkQueue({ ...base, debounceMs: 100, timers, worker: async () => true });
    await q.stop(100);
    q.enqueue("a", "change");
    expect(q.stats()).toEqual({ pending: 0, running: 0, backingOff: 0 });
  });

  it("cancel drops a pending item before it runs", async () => {
    const timers = manualTimers();
    const runs: WorkItem[] = [];
    const q = startWorkQueue({ ...base, debounceMs: 100, timers, worker: async (i) => (runs.push(i), true) });
    q.enqueue("a", "change");
    q.cancel("a");
    await timers.advance(1_000);
    expect(runs).toEqual([]);
    expect(q.stats().pending).toBe(0);
  });

  it("keeps one timer for an unchanged wake time, and none when nothing waits", async () => {
    const { timers, set } = countingTimers();
    const gate = deferred();
    const q = startWorkQueue({
      ...base,
      concurrency: 2,
      timers,
      // a runs until the gate opens; the others fail their first try.
      worker: (i) => (i.key === "a" ? gate.promise : Promise.resolve(i.attempt > 0)),
    });
    q.enqueue("a", "change");
    await timers.advance(0);
    expect(set()).toBe(0);
    // b fails and backs off: one timer for its retry, not one more per pump that keeps that time.
    q.enqueue("b", "drift");
    await settle();
    q.enqueue("c", "drift");
    await settle();
    expect(set()).toBe(1);
    gate.resolve(true);
    await timers.advance(10_000);
    expect(timers.pending()).toBe(0);
  });
  it("stop cancels the retry timer and sets none in its place, only its grace timer", async () => {
    const { timers, set } = countingTimers();
    const q = startWorkQueue({ ...base, timers, worker: async () => false });
    q.enqueue("a", "drift");
    await timers.advance(0);
    expect(set()).toBe(1); // a's retry
    expect(await q.stop(100)).toBe(true);
    expect(set()).toBe(2); // stop's grace period, nothing else
  });
});

describe("systemTimers", () => {
  it("reads the wall clock", () => {
    const before = Date.now();
    const read = systemTimers.now();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });

  it("fires a timer after its delay, and never one that was cancelled", async () => {
    const fired: string[] = [];
    const cancel = systemTimers.setTimeout(() => fired.push("cancelled"), 1);
    cancel();
    await new Promise<void>((resolve) => systemTimers.setTimeout(() => (fired.push("kept"), resolve()), 20));
    expect(fired).toEqual(["kept"]);
  });
});
