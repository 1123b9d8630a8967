/**
 * Rounds a CPU value to one decimal place, half up on the decimal as written (0.25 → 0.3,
 * 0.35 → 0.4, 1.05 → 1.1, 0.14 → 0.1), as the control plane does. Binary floating point would
 * round 0.35 down, so this works on the shortest decimal string of the number.
 */
export function roundCpu(value: number): number {
  if (!Number.isFinite(value)) return value;
  const text = Math.abs(value).toString();
  if (text.includes("e")) return Number(value.toFixed(1));
  const [whole = "0", fraction = ""] = text.split(".");
  if (fraction.length <= 1) return value;
  const tenths = Number(whole) * 10 + Number(fraction[0]) + (Number(fraction[1]) >= 5 ? 1 : 0);
  return (Math.sign(value) * tenths) / 10;
}

/** True when the value has more than one decimal place as written, so the control plane rounds it. */
export const needsCpuRounding = (value: number): boolean => roundCpu(value) !== value;
