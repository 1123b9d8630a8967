import { CPU_FIELDS, RESOURCE_DEFAULTS } from "../../schema/constants.js";
import { roundCpu } from "./cpu.js";

// A resource_spec's numbers as the control plane stores them (decisions.md): CPU fields rounded
// half up to one decimal, then each absent derivable field filled from the rounded value it derives
// from. One model for validate's resource-order rule and the diff's stored form (src/diff/resource-spec.ts).

export type StoredNumber = { value: number; from?: string };

const CPU = new Set<string>(CPU_FIELDS);

/** Each number of `spec` as stored, and each filled default with the field it came from. */
export function storedResourceNumbers(spec: Readonly<Record<string, unknown>>): Map<string, StoredNumber> {
  const stored = new Map<string, StoredNumber>();
  for (const [key, value] of Object.entries(spec))
    if (typeof value === "number") stored.set(key, { value: CPU.has(key) ? roundCpu(value) : value });
  for (const { field, from, factor } of RESOURCE_DEFAULTS) {
    const source = stored.get(from);
    // Filled only when absent (null or not written): a value of another type stays the manifest's.
    if (source && (spec[field] === undefined || spec[field] === null))
      stored.set(field, { value: source.value * factor, from });
  }
  return stored;
}
