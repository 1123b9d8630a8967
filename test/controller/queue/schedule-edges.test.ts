import { describe, expect, it } from "vitest";
import { WorkSchedule } from "../../../src/controller/queue/schedule.js";

// The schedule's edges: ties, retries against fresh changes, what a failure leaves behind, and the
// counts. random 0.5: the first retry waits 500 ms (half its 1 s ceiling).
const options = { concurrency: 1, debounceMs: 0, backoffBaseMs: 1000, backoffMaxMs: 8000, random: () => 0.5 };

describe("WorkSchedule edges", () => {
  it("refuses a concurrency under 1", () => {
    expect(() => new WorkSchedule({ ...options, concurrency: 0 })).toThrow("concurrency must be at least 1");
  });

  it("cancel of a key it never saw is a no-op", () => {
    const s = new WorkSchedule(options);
    expect(() => s.cancel("ghost")).not.toThrow();
    expect(s.stats()).toEqual({ pending: 0, running: 0, backingOff: 0 });
  });

  it("equal rank and time: the one queued first starts first, whatever the key's age", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "change", 0);
    s.enqueue("b", "change", 0);
    s.enqueue("a", "change", 0); // a's newer save: queued after b's
    expect(s.take(0).map((i) => i.key)).toEqual(["b"]);
  });

  it("retries that fall due together start in the order they failed", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "drift", 0);
    s.enqueue("b", "drift", 0);
    s.complete(s.take(0)[0]!, false, 0);
    s.complete(s.take(0)[0]!, false, 0);
    expect(s.take(500).map((i) => i.key)).toEqual(["a"]);
  });

  it("a fresh change starts before an older retry of a change, which starts before a drift check", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 100 });
    s.enqueue("retry", "change", 0);
    s.complete(s.take(100)[0]!, false, 100); // retry due at 600
    s.enqueue("drift", "drift", 0);
    s.enqueue("fresh", "change", 550); // due at 650
    expect(s.take(700).map((i) => `${i.key}:${i.attempt}`)).toEqual(["fresh:0"]);
    s.complete({ key: "fresh", reason: "change", attempt: 0 }, true, 700);
    expect(s.take(700).map((i) => `${i.key}:${i.attempt}`)).toEqual(["retry:1"]);
  });

  it("completing an item that is not running changes nothing", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "drift", 0);
    s.enqueue("b", "drift", 0);
    s.take(0);
    s.complete({ key: "b", reason: "drift", attempt: 0 }, true, 1);
    expect(s.stats()).toEqual({ pending: 1, running: 1, backingOff: 0 });
    expect(s.take(1)).toEqual([]);
  });

  it("a retry that succeeds clears the failures and the backoff", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "drift", 0);
    s.complete(s.take(0)[0]!, false, 0);
    expect(s.stats()).toEqual({ pending: 1, running: 0, backingOff: 1 });
    s.complete(s.take(500)[0]!, true, 500);
    expect(s.failures("a")).toBe(0);
    expect(s.stats()).toEqual({ pending: 0, running: 0, backingOff: 0 });
    // No backoff left: a drift check is ready at once.
    s.enqueue("a", "drift", 501);
    expect(s.take(501)).toEqual([{ key: "a", reason: "drift", attempt: 0 }]);
  });

  it("a change saved while its reconcile failed supersedes the retry and ignores the backoff", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 100 });
    s.enqueue("a", "change", 0);
    const [running] = s.take(100);
    s.enqueue("a", "change", 100); // due at 200
    expect(s.nextWakeAt()).toBeUndefined(); // a runs: nothing to wake for
    s.complete(running!, false, 150); // backoff until 650
    expect(s.nextWakeAt()).toBe(200);
    expect(s.take(200)).toEqual([{ key: "a", reason: "change", attempt: 0 }]);
  });

  it("a drift check queued after a failure and a cancel still waits out the backoff", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "drift", 0);
    s.complete(s.take(0)[0]!, false, 0); // backoff until 500
    s.cancel("a");
    s.enqueue("a", "drift", 10);
    expect(s.take(10)).toEqual([]);
    expect(s.nextWakeAt()).toBe(500);
    expect(s.take(500)).toEqual([{ key: "a", reason: "drift", attempt: 0 }]);
  });

  it("wakes for the earliest of several waiting keys, skipping running ones", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 100 });
    s.enqueue("now", "drift", 0);
    expect(s.take(0)).toHaveLength(1);
    s.enqueue("late", "change", 300);
    s.enqueue("early", "change", 100);
    s.enqueue("middle", "change", 200);
    expect(s.nextWakeAt()).toBe(200);
  });

  it("counts pending and backing-off keys", () => {
    const s = new WorkSchedule({ ...options, concurrency: 2 });
    for (const key of ["a", "b", "c"]) s.enqueue(key, "drift", 0);
    const [a, b] = s.take(0);
    s.complete(a!, false, 0);
    s.complete(b!, false, 0);
    expect(s.stats()).toEqual({ pending: 3, running: 0, backingOff: 2 });
  });
});
