import { CPU_FIELDS, RESOURCE_DEFAULTS } from "../schema/constants.js";
import { roundCpu } from "../manifest/rules/cpu.js";
import { storedResourceNumbers } from "../manifest/rules/resource-defaults.js";
import { deepEqual, type JsonObject, withoutAbsent } from "./values.js";

// The server's treatment of resource_spec (decisions.md): CPU fields rounded half up to one
// decimal, then documented defaults filled from the rounded values.

const CPU = new Set<string>(CPU_FIELDS);

/** Null fields dropped, CPU fields rounded (the value the server stores for what was sent). */
export function roundResourceSpec(spec: JsonObject | null | undefined): JsonObject {
  const out = withoutAbsent(spec);
  for (const key of Object.keys(out)) {
    const value = out[key];
    if (CPU.has(key) && typeof value === "number") out[key] = roundCpu(value);
  }
  return out;
}

/** The stored form: rounded, then every absent derivable field filled from its source field. */
export function fillResourceDefaults(spec: JsonObject | null | undefined): JsonObject {
  const out = roundResourceSpec(spec);
  for (const [field, { value, from }] of storedResourceNumbers(out)) if (from) out[field] = value;
  return out;
}

/** True when `field` of a stored spec holds exactly the default the server derives for it. */
export function isDerivedDefault(stored: JsonObject, field: string): boolean {
  const derivation = RESOURCE_DEFAULTS.find((d) => d.field === field);
  if (!derivation) return false;
  const source = stored[derivation.from];
  return typeof source === "number" && deepEqual(stored[field], source * derivation.factor);
}
