import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { roundCpu } from "../../../src/manifest/rules/cpu.js";

describe("roundCpu", () => {
  it.each([
    [0.25, 0.3],
    [0.35, 0.4],
    [1.05, 1.1],
    [0.14, 0.1],
    [0.15, 0.2],
    [2.45, 2.5],
    [0.05, 0.1],
    [0.049, 0],
    [8, 8],
    [15.95, 16],
    [1e-7, 0],
    [0.96, 1],
    [2.449, 2.4],
    [7.95, 8],
    [0.5, 0.5],
  ])("rounds %s half up to %s", (value, expected) => {
    expect(roundCpu(value)).toBe(expected);
  });

  it("gives a value of at most one decimal back as it is, as the decimal digits say", () => {
    // The long way (decimal digits, BigInt tenths), for values roundCpu answers at once.
    const byDigits = (value: number) => {
      const [whole = "0", fraction = ""] = String(Math.abs(value)).split(".");
      const rounded = Number(BigInt(whole) * 10n + BigInt(fraction[0] ?? "0")) / 10;
      return value < 0 ? -rounded : rounded;
    };
    fc.assert(
      fc.property(fc.integer({ min: -1e15, max: 1e15 }), fc.integer({ min: 0, max: 9 }), (whole, tenth) => {
        const value = Number(`${whole}.${tenth}`);
        expect(Object.is(roundCpu(value), byDigits(value))).toBe(true);
      }),
    );
    expect(Object.is(roundCpu(-0), 0)).toBe(true);
    expect(roundCpu(1e21)).toBe(1e21);
    expect(roundCpu(0.35)).toBe(0.4);
  });

  it("is idempotent and stays within 0.05 of the value", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 100, noNaN: true }), (value) => {
        const rounded = roundCpu(value);
        expect(roundCpu(rounded)).toBe(rounded);
        expect(Math.abs(rounded - value)).toBeLessThanOrEqual(0.05 + 1e-9);
      }),
    );
  });

  it("rounds every two-decimal value as the decimal string says", () => {
    for (let hundredths = 0; hundredths <= 1600; hundredths++) {
      const text = (hundredths / 100).toFixed(2);
      const [whole, fraction] = text.split(".") as [string, string];
      const tenths = Number(whole) * 10 + Number(fraction[0]) + (Number(fraction[1]) >= 5 ? 1 : 0);
      expect(roundCpu(Number(text))).toBe(tenths / 10);
    }
  });
});
