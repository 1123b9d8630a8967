import { CPU_FIELDS } from "../schema/constants.js";
import { roundCpu } from "../manifest/rules/cpu.js";
import { deepEqual, isAbsent, type JsonObject, withoutAbsent } from "./values.js";

// The server's treatment of resource_spec (decisions.md): CPU fields rounded half up to one
// decimal, then documented defaults filled from the rounded values.

type Derivation = { field: string; from: string; factor: number };

/** In dependency order: queue_cpu is filled before queue_cpu_limit derives from it. */
const RESOURCE_DEFAULTS: readonly Derivation[] = [
  { field: "cpu_limit", from: "cpu", factor: 2 },
  { field: "memory_limit_mb", from: "memory_mb", factor: 2 },
  { field: "queue_min_scale", from: "min_scale", factor: 1 },
  { field: "queue_max_scale", from: "max_scale", factor: 1 },
  { field: "queue_cpu", from: "cpu", factor: 1 },
  { field: "queue_memory_mb", from: "memory_mb", factor: 1 },
  { field: "queue_cpu_limit", from: "queue_cpu", factor: 2 },
  { field: "queue_memory_limit_mb", from: "queue_memory_mb", factor: 2 },
  { field: "redis_cpu_limit", from: "redis_cpu", factor: 2 },
  { field: "redis_memory_limit_mb", from: "redis_memory_mb", factor: 1 },
  { field: "db_cpu_limit", from: "db_cpu", factor: 2 },
  { field: "db_memory_limit_mb", from: "db_memory_mb", factor: 2 },
];

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
  for (const { field, from, factor } of RESOURCE_DEFAULTS) {
    const source = out[from];
    if (isAbsent(out[field]) && typeof source === "number") out[field] = source * factor;
  }
  return out;
}

/** True when `field` of a stored spec holds exactly the default the server derives for it. */
export function isDerivedDefault(stored: JsonObject, field: string): boolean {
  const derivation = RESOURCE_DEFAULTS.find((d) => d.field === field);
  if (!derivation) return false;
  const source = stored[derivation.from];
  return typeof source === "number" && deepEqual(stored[field], source * derivation.factor);
}
