import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffCeiling, backoffDelay } from "../src/clock.js";

describe("backoff (full jitter)", () => {
  const backoff = { baseMs: 100, maxMs: 1_000 };

  it("doubles its ceiling per attempt from baseMs, never above maxMs", () => {
    expect([1, 2, 3, 4, 5, 40].map((a) => backoffCeiling(a, backoff))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(backoffCeiling(0, backoff)).toBe(100);
    expect([1, 2, 3].map((a) => backoffCeiling(a, { ...backoff, factor: 1.5 }))).toEqual([100, 150, 225]);
  });

  it("draws a whole number of ms uniformly over [0, ceiling)", () => {
    expect(backoffDelay(3, backoff, () => 0)).toBe(0);
    expect(backoffDelay(3, backoff, () => 0.5)).toBe(200);
    expect(backoffDelay(3, backoff, () => 0.999_999)).toBe(399);
    expect(backoffDelay(9, backoff, () => 0.999_999)).toBe(999);
  });

  it("stays within its bounds for any attempt, base, cap, factor and draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 2_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.constantFrom(undefined, 1.5, 2, 3),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, maxMs, factor, draw) => {
          const b = { baseMs, maxMs, ...(factor === undefined ? {} : { factor }) };
          const ceiling = backoffCeiling(attempt, b);
          const delay = backoffDelay(attempt, b, () => draw);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThan(Math.max(1, ceiling));
          expect(ceiling).toBeLessThanOrEqual(maxMs);
          expect(ceiling).toBeGreaterThanOrEqual(Math.min(baseMs, maxMs));
          expect(backoffCeiling(attempt + 1, b)).toBeGreaterThanOrEqual(ceiling);
        },
      ),
    );
  });
});
