import { getEventListeners, setMaxListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { abortableExchange } from "../../../src/api/transport/abortable-exchange.js";

describe("abortableExchange", () => {
  afterEach(() => vi.useRealTimers());

  it("aborts with a TimeoutError when the time runs out, and says it timed out", () => {
    vi.useFakeTimers();
    const exchange = abortableExchange(1_000);
    vi.advanceTimersByTime(999);
    expect(exchange.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(exchange.signal.aborted).toBe(true);
    expect((exchange.signal.reason as Error).name).toBe("TimeoutError");
    expect(exchange.timedOut()).toBe(true);
  });

  it("follows the caller's signal, which is not a timeout", () => {
    const caller = new AbortController();
    const exchange = abortableExchange(30_000, caller.signal);
    caller.abort(new Error("stop"));
    expect(exchange.signal.aborted).toBe(true);
    expect((exchange.signal.reason as Error).message).toBe("stop");
    expect(exchange.timedOut()).toBe(false);
    exchange.release();
  });

  it("starts aborted when the caller already gave up", () => {
    const caller = new AbortController();
    caller.abort();
    expect(abortableExchange(30_000, caller.signal).signal.aborted).toBe(true);
  });

  it("leaves nothing behind once released: no timer, no listener on the caller's long-lived signal", () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    // A long-lived signal that every request in flight listens on, as apply's stop signal and the
    // controller's work queue are: they lift the listener limit (else Node warns at 11 listeners).
    setMaxListeners(0, caller.signal);
    const exchanges = Array.from({ length: 100 }, () => abortableExchange(30_000, caller.signal));
    expect(vi.getTimerCount()).toBe(100);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(100);
    for (const exchange of exchanges) exchange.release();
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    vi.advanceTimersByTime(60_000);
    expect(exchanges.some((e) => e.signal.aborted)).toBe(false);
  });
});
