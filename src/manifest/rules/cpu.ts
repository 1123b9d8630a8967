// CPU values are rounded to one decimal place, half up on the decimal value as written
// (decisions.md): 0.25 → 0.3, 0.35 → 0.4, 1.05 → 1.1, 0.14 → 0.1. Math.round(x * 10) / 10 gets
// 0.35 wrong (0.35 * 10 === 3.4999999999999996), so this works on the decimal digits instead.

/** Decimal digits of a finite number without exponent notation, e.g. 1e-7 → "0.0000001". */
function plainDecimal(value: number): string {
  const text = String(Math.abs(value));
  const match = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const digits = `${match[1]}${match[2] ?? ""}`;
  const exponent = Number(match[3]);
  if (exponent < 0) return `0.${"0".repeat(-exponent - 1)}${digits}`;
  return digits.padEnd(exponent + 1, "0");
}

/** Rounds a CPU value (cores) half up (away from zero) to one decimal, on its shortest decimal form. */
export function roundCpu(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (atMostOneDecimal(value)) return value;
  const [whole = "0", fraction = ""] = plainDecimal(value).split(".");
  let tenths = BigInt(whole) * 10n + BigInt(fraction[0] ?? "0");
  if ((fraction[1] ?? "0") >= "5") tenths += 1n;
  const rounded = Number(tenths) / 10;
  return value < 0 ? -rounded : rounded;
}

/**
 * A value written with at most one decimal (most CPU values: 0.5, 2), which rounds to itself: its
 * tenths are exact below 1e14 (2^53 is ~9e15), and dividing them by 10 gives back the double
 * nearest to the decimal, which is the value. Zero (-0 rounds to 0) and exponent forms take the
 * long way.
 */
function atMostOneDecimal(value: number): boolean {
  if (value === 0 || value >= 1e14 || value <= -1e14) return false;
  const text = String(value);
  const dot = text.indexOf(".");
  return dot === -1 ? !text.includes("e") : dot === text.length - 2;
}

/** True when the value has more than one decimal place as written, so the control plane rounds it. */
export const needsCpuRounding = (value: number): boolean => roundCpu(value) !== value;
