import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRateLimiter, identityOf, TokenBucket } from "../../src/api/rate-limiter.js";
import { fakeClock } from "./helpers.js";

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

describe("TokenBucket", () => {
  it("never spends more than the budget in any window (property)", () => {
    const event = fc.oneof(
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
        let now = 0;
        const bucket = new TokenBucket(cfg, now);
        const grants: number[] = [];
        for (const e of events) {
          now += e.gap;
          if (e.kind === "pause") bucket.pauseUntil(now + e.forMs, now);
          else grants.push(now + bucket.reserve(now));
        }
        expect(busiestWindow(grants, cfg.windowMs)).toBeLessThanOrEqual(cfg.limit);
      }),
      { numRuns: 300 },
    );
  });

  it("serves a burst at once, then paces at the refill rate, in order", () => {
    const bucket = new TokenBucket({ limit: 1000, windowMs: 10_000 }, 0);
    expect(bucket.capacity).toBe(50);
    expect(bucket.rate).toBeCloseTo(0.09); // (950 − 50) / 10 s
    const waits = Array.from({ length: 52 }, () => bucket.reserve(0));
    expect(waits.slice(0, 50).every((w) => w === 0)).toBe(true);
    expect(waits.slice(50)).toEqual([12, 23]); // 1/0.09 ms per token, rounded up
  });

  it("grants nothing before a pause ends", () => {
    const bucket = new TokenBucket({ limit: 100, windowMs: 1000 }, 0);
    bucket.pauseUntil(5000, 0);
    expect(bucket.reserve(10)).toBeGreaterThanOrEqual(4990);
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
    for (let i = 0; i < 4; i += 1) await limiter.schedule(permit, async (ms) => waited.push(ms));
    // budget 9, burst 1: one at once, then one per 125 ms
    expect(waited).toEqual([0, 125, 125, 125]);
    await limiter.schedule({ ...permit, identity: identityOf("key-b") }, async (ms) => waited.push(ms));
    expect(waited[4]).toBe(0);
    expect(limiter.stats()).toEqual({ granted: 5, waited: 3, waitedMs: 375 });
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
