import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRateLimiter, identityOf, TokenBucket } from "../../../src/api/transport/rate-limiter.js";
import { fakeClock } from "../../support/fake-clock.js";

/** Largest number of grants inside any half-open window [t, t + windowMs). */
function busiestWindow(grants: number[], windowMs: number): number {
  const sorted = [...grants].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i += 1) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j += 1;
    best = Math.max(best, j - i);
  }
  return best;
}

type Event = { kind: "request"; gap: number } | { kind: "pause"; gap: number; forMs: number };

/** Serves queued requests in order the way the limiter's pump does; returns the send times. */
function simulate(bucket: TokenBucket, events: Event[]): number[] {
  let arrival = 0;
  const timed = events.map((e) => ({ ...e, at: (arrival += e.gap) }));
  const grants: number[] = [];
  let t = 0;
  let queued = 0;
  let i = 0;
  while (i < timed.length || queued > 0) {
    for (; i < timed.length && timed[i]!.at <= t; i += 1) {
      const e = timed[i]!;
      if (e.kind === "pause") bucket.pauseUntil(e.at + e.forMs, t);
      else queued += 1;
    }
    if (queued === 0) {
      t = Math.max(t, timed[i]?.at ?? t);
      continue;
    }
    const wait = bucket.tryTake(t);
    if (wait === 0) {
      grants.push(t);
      queued -= 1;
    } else t += wait;
  }
  return grants;
}

describe("TokenBucket", () => {
  it("never spends more than the budget in any window (property)", () => {
    const event: fc.Arbitrary<Event> = fc.oneof(
      fc.record({ kind: fc.constant("request" as const), gap: fc.integer({ min: 0, max: 400 }) }),
      fc.record({
        kind: fc.constant("pause" as const),
        gap: fc.integer({ min: 0, max: 400 }),
        forMs: fc.integer({ min: 0, max: 3000 }),
      }),
    );
    const config = fc.record({
      limit: fc.integer({ min: 5, max: 200 }),
      windowMs: fc.integer({ min: 100, max: 10_000 }),
      utilisation: fc.double({ min: 0.5, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(config, fc.array(event, { minLength: 1, maxLength: 600 }), (cfg, events) => {
        const grants = simulate(new TokenBucket(cfg, 0), events);
        expect(grants).toHaveLength(events.filter((e) => e.kind === "request").length);
        expect(busiestWindow(grants, cfg.windowMs)).toBeLessThanOrEqual(cfg.limit);
      }),
      { numRuns: 300 },
    );
  });

  it("serves a burst at once, then paces at the refill rate", () => {
    const bucket = new TokenBucket({ limit: 1000, windowMs: 10_000 }, 0);
    expect(bucket.capacity).toBe(10);
    expect(bucket.rate).toBeCloseTo(0.098); // (990 − 10) / 10 s: 98% of the budget, steady
    const waits = Array.from({ length: 11 }, () => bucket.tryTake(0));
    expect(waits.slice(0, 10).every((w) => w === 0)).toBe(true);
    expect(waits[10]).toBe(11); // 1 / 0.098 ms per token, rounded up
    expect(bucket.tryTake(11)).toBe(0);
  });

  it("grants nothing before a pause ends", () => {
    const bucket = new TokenBucket({ limit: 100, windowMs: 1000 }, 0);
    bucket.pauseUntil(5000, 0);
    expect(bucket.tryTake(10)).toBeGreaterThanOrEqual(4990);
    expect(bucket.tryTake(4999)).toBeGreaterThan(0);
  });

  it("refuses a limit too small for its burst", () => {
    expect(() => new TokenBucket({ limit: 1, windowMs: 1000 }, 0)).toThrow(RangeError);
  });
});

describe("createRateLimiter", () => {
  it("reports the time it made callers wait and keeps identities apart", async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({
      clock,
      categorize: () => ({ name: "test", limit: 10, windowMs: 1000 }),
    });
    const waited: number[] = [];
    const permit = { identity: identityOf("key-a"), method: "GET", path: "/v2/deployments" };
    await Promise.all(
      Array.from({ length: 4 }, () => limiter.schedule(permit, async (ms) => waited.push(ms))),
    );
    // budget 9, burst 1: one at once, then one per 125 ms, in order
    expect(waited).toEqual([0, 125, 250, 375]);
    await limiter.schedule({ ...permit, identity: identityOf("key-b") }, async (ms) => waited.push(ms));
    expect(waited[4]).toBe(0);
    expect(limiter.stats()).toEqual({ granted: 5, waited: 3, waitedMs: 750 });
  });

  it("lets an aborted waiter leave the queue at once", async () => {
    const clock = fakeClock();
    const limiter = createRateLimiter({
      clock,
      categorize: () => ({ name: "t", limit: 10, windowMs: 1000 }),
    });
    const permit = { identity: "x", method: "GET", path: "/" };
    limiter.pause(permit, clock.now() + 60_000);
    const controller = new AbortController();
    const pending = limiter.schedule({ ...permit, signal: controller.signal }, async () => "sent");
    controller.abort(new Error("cancelled"));
    await expect(pending).rejects.toThrow("cancelled");
  });

  it("caps concurrency", async () => {
    const limiter = createRateLimiter({ clock: fakeClock(), maxConcurrency: 3 });
    let running = 0;
    let peak = 0;
    const permit = { identity: "x", method: "GET", path: "/" };
    await Promise.all(
      Array.from({ length: 10 }, () =>
        limiter.schedule(permit, async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((r) => setImmediate(r));
          running -= 1;
        }),
      ),
    );
    expect(peak).toBe(3);
  });

  it("hashes identities", () => {
    expect(identityOf("secret-key")).not.toContain("secret");
    expect(identityOf("a")).toHaveLength(16);
  });
});
