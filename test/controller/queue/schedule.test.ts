import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WorkSchedule } from "../../../src/controller/queue/schedule.js";

// random 0.5: each retry waits half its ceiling (full jitter pinned).
const options = {
  concurrency: 2,
  debounceMs: 100,
  backoffBaseMs: 1000,
  backoffMaxMs: 8000,
  random: () => 0.5,
};

describe("WorkSchedule", () => {
  it("debounces a burst of changes into one item, ready after the last save's wait", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "change", 0);
    s.enqueue("a", "change", 50);
    s.enqueue("a", "change", 90);
    expect(s.take(150)).toEqual([]);
    expect(s.nextWakeAt()).toBe(190);
    expect(s.take(190)).toEqual([{ key: "a", reason: "change", attempt: 0 }]);
    expect(s.take(1000)).toEqual([]);
  });

  it("never runs one key twice at once, and reruns it after completion when changed meanwhile", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 0 });
    s.enqueue("a", "change", 0);
    const [first] = s.take(0);
    s.enqueue("a", "change", 1);
    expect(s.take(5)).toEqual([]);
    s.complete(first!, true, 10);
    expect(s.take(10)).toEqual([{ key: "a", reason: "change", attempt: 0 }]);
  });

  it("bounds concurrency over all keys", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 0 });
    for (const key of ["a", "b", "c"]) s.enqueue(key, "drift", 0);
    expect(s.take(0).map((i) => i.key)).toEqual(["a", "b"]);
    expect(s.take(0)).toEqual([]);
    s.complete({ key: "a", reason: "drift", attempt: 0 }, true, 1);
    expect(s.take(1).map((i) => i.key)).toEqual(["c"]);
    expect(s.stats()).toEqual({ pending: 0, running: 2, backingOff: 0 });
  });

  it("starts change-triggered work before older periodic drift checks", () => {
    const s = new WorkSchedule({ ...options, concurrency: 1, debounceMs: 0 });
    s.enqueue("d1", "drift", 0);
    s.enqueue("d2", "drift", 0);
    s.enqueue("c", "change", 5);
    expect(s.take(5)).toEqual([{ key: "c", reason: "change", attempt: 0 }]);
  });

  it("a change upgrades a queued drift check, a drift check never downgrades a change", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 0 });
    s.enqueue("a", "drift", 0);
    s.enqueue("a", "change", 0);
    s.enqueue("a", "drift", 0);
    expect(s.take(0)).toEqual([{ key: "a", reason: "change", attempt: 0 }]);
  });

  it("backs off exponentially, capped, for a key that keeps failing; drift checks wait it out", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 0 });
    s.enqueue("a", "drift", 0);
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [item] = s.take(now);
      s.complete(item!, false, now);
      s.enqueue("a", "drift", now); // periodic check arrives: must not bypass the backoff
      expect(s.take(now)).toEqual([]);
      const at = s.nextWakeAt()!;
      delays.push(at - now);
      now = at;
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(s.failures("a")).toBe(5);
    expect(s.take(now)[0]).toMatchObject({ key: "a", attempt: 5 });
  });

  it("a new change resets the backoff and success clears the failure count", () => {
    const s = new WorkSchedule({ ...options, debounceMs: 0 });
    s.enqueue("a", "change", 0);
    s.complete(s.take(0)[0]!, false, 0);
    expect(s.take(10)).toEqual([]);
    s.enqueue("a", "change", 10);
    const [item] = s.take(10);
    expect(item).toEqual({ key: "a", reason: "change", attempt: 0 });
    s.complete(item!, true, 20);
    expect(s.failures("a")).toBe(0);
    expect(s.nextWakeAt()).toBeUndefined();
  });

  it("cancel drops pending work", () => {
    const s = new WorkSchedule(options);
    s.enqueue("a", "change", 0);
    s.cancel("a");
    expect(s.take(1000)).toEqual([]);
  });

  it("takes the best ready items (changes, then retries, then drift; earliest; first queued), only as many as slots", () => {
    const request = fc.record({
      key: fc.integer({ min: 0, max: 40 }).map((n) => `k${n}`),
      reason: fc.constantFrom("change" as const, "drift" as const),
      at: fc.integer({ min: 0, max: 500 }),
    });
    fc.assert(
      fc.property(
        fc.array(request, { maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        (requests, concurrency) => {
          const s = new WorkSchedule({ ...options, concurrency, debounceMs: 100 });
          // The reference: what each key holds after the requests in time order, then a full sort.
          const held = new Map<string, { reason: string; readyAt: number; seq: number }>();
          let seq = 0;
          for (const { key, reason, at } of [...requests].sort((a, b) => a.at - b.at)) {
            s.enqueue(key, reason, at);
            if (reason === "change") held.set(key, { reason, readyAt: at + 100, seq: seq++ });
            else if (!held.has(key)) held.set(key, { reason, readyAt: at, seq: seq++ });
          }
          const now = 550;
          const expected = [...held]
            .filter(([, h]) => h.readyAt <= now)
            .sort(
              ([, a], [, b]) =>
                (a.reason === "change" ? 0 : 2) - (b.reason === "change" ? 0 : 2) ||
                a.readyAt - b.readyAt ||
                a.seq - b.seq,
            )
            .slice(0, concurrency)
            .map(([key, h]) => ({ key, reason: h.reason, attempt: 0 }));
          expect(s.take(now)).toEqual(expected);
          expect(s.take(now)).toEqual([]); // every slot is taken, or nothing else is ready
        },
      ),
    );
  });
});
