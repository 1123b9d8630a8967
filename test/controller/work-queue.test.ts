import { describe, expect, it } from "vitest";
import type { WorkItem } from "../../src/controller/schedule.js";
import { startWorkQueue } from "../../src/controller/work-queue.js";
import { manualTimers } from "./manual-timers.js";

const base = { concurrency: 2, debounceMs: 100, backoffBaseMs: 1000, backoffMaxMs: 4000 };

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
    await timers.advance(8000);
    expect(at).toEqual([0, 1000, 3000, 7000]);
    expect(q.failures("a")).toBe(4);
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
});
