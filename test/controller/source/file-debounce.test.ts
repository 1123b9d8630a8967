import { describe, expect, it } from "vitest";
import { createFileDebounce, SAVE_EVENTS, SETTLE_MS } from "../../../src/controller/source/file-debounce.js";
import type { Timers } from "../../../src/controller/queue/work-queue.js";

/** Timers advanced by hand: `advance` runs what falls due, in order. */
function manualTimers() {
  let now = 1_000;
  let pending: { at: number; fn: () => void; id: number }[] = [];
  let nextId = 0;
  const timers: Timers = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      pending.push({ at: now + ms, fn, id });
      return () => void (pending = pending.filter((p) => p.id !== id));
    },
  };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      const due = pending.filter((p) => p.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      pending = pending.filter((p) => p !== due);
      now = due.at;
      due.fn();
    }
    now = until;
  };
  return { timers, advance, pending: () => pending.length };
}

describe("file events → rescans", () => {
  it("a single save after a quiet spell rescans after SETTLE_MS, not the whole debounce", () => {
    const t = manualTimers();
    const runs: number[] = [];
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs.push(t.timers.now()) });
    d.event();
    t.advance(SETTLE_MS - 1);
    expect(runs).toEqual([]);
    t.advance(1);
    expect(runs).toEqual([1_000 + SETTLE_MS]);
  });

  it("the events of one save (a few ms apart) are one rescan", () => {
    const t = manualTimers();
    let runs = 0;
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs++ });
    d.event();
    t.advance(2);
    d.event();
    t.advance(1_000);
    expect(runs).toBe(1);
  });

  it("saves one after another (100 ms apart) each rescan quickly", () => {
    const t = manualTimers();
    const runs: number[] = [];
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs.push(t.timers.now()) });
    for (let i = 0; i < 5; i++) {
      d.event();
      t.advance(100);
    }
    expect(runs).toEqual([0, 100, 200, 300, 400].map((at) => 1_000 + at + SETTLE_MS));
  });

  it(`up to ${SAVE_EVENTS} events close together are one save; one more makes a burst`, () => {
    const t = manualTimers();
    const runs: number[] = [];
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs.push(t.timers.now()) });
    for (let i = 0; i < SAVE_EVENTS; i++) d.event();
    t.advance(1_000);
    expect(runs).toEqual([1_000 + SETTLE_MS]);
    for (let i = 0; i <= SAVE_EVENTS; i++) d.event();
    t.advance(1_000);
    expect(runs.at(-1)).toBe(2_000 + 200);
  });

  it("a burst is coalesced into one rescan, quietMs after its last event", () => {
    const t = manualTimers();
    const runs: number[] = [];
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs.push(t.timers.now()) });
    for (let i = 0; i < 20; i++) {
      d.event();
      t.advance(5);
    }
    // The last event came at 1_000 + 95; the rescan waits for 200 ms of quiet.
    t.advance(1_000);
    expect(runs).toEqual([1_000 + 95 + 200]);
  });

  it("after the burst has gone quiet, the next save is fast again", () => {
    const t = manualTimers();
    const runs: number[] = [];
    const d = createFileDebounce({ timers: t.timers, quietMs: 200, run: () => runs.push(t.timers.now()) });
    d.event();
    t.advance(3);
    d.event();
    t.advance(500);
    const quietAt = t.timers.now();
    d.event();
    t.advance(SETTLE_MS);
    expect(runs.at(-1)).toBe(quietAt + SETTLE_MS);
    expect(runs).toHaveLength(2);
  });

  it("cancel drops a pending rescan; a debounce shorter than SETTLE_MS is not lengthened", () => {
    const t = manualTimers();
    let runs = 0;
    const d = createFileDebounce({ timers: t.timers, quietMs: 3, run: () => runs++ });
    d.event();
    d.cancel();
    t.advance(100);
    expect(runs).toBe(0);
    expect(t.pending()).toBe(0);
    d.event();
    t.advance(3);
    expect(runs).toBe(1);
  });
});
