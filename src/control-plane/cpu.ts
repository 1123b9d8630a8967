// Deliberately independent of src/diff/ (the client-side model of these rules): the local control
// plane stands in for a foreign service, so sharing code would let one bug hide on both sides.
import type { ResourceSpec } from "../schema/resource-spec.js";
// Every CPU value of spec 2.4, the deprecated orchestrator_* and executor_* ones included.
import { CPU_FIELDS } from "../schema/resource-spec.js";

/**
 * Rounds half up to one decimal on the decimal as written (0.35 → 0.4, 1.05 → 1.1), which
 * floating-point rounding gets wrong. Works on the shortest decimal form of the number.
 */
function roundCpu(value: number): number {
  if (!Number.isFinite(value)) return value;
  const negative = value < 0;
  let text = String(Math.abs(value));
  if (text.includes("e")) {
    if (Math.abs(value) >= 1e21) return value;
    text = Math.abs(value).toFixed(20);
  }
  const [whole = "0", fraction = ""] = text.split(".");
  const tenths = BigInt(whole + (fraction[0] ?? "0")) + (Number(fraction[1] ?? "0") >= 5 ? 1n : 0n);
  const rounded = Number(tenths) / 10;
  return negative && rounded !== 0 ? -rounded : rounded;
}

/** Twice a value already rounded to tenths, without float drift (0.7 × 2 = 1.4 exactly). */
const doubleTenths = (value: number): number => (Math.round(value * 10) * 2) / 10;
const present = (value: unknown): value is number => typeof value === "number";

/** Rounds the CPU fields and fills the documented defaults from the rounded values. */
export function normalizeResourceSpec(input: ResourceSpec): ResourceSpec {
  const spec: Record<string, unknown> = { ...input };
  for (const field of CPU_FIELDS) {
    const value = spec[field];
    if (present(value)) spec[field] = roundCpu(value);
  }
  const fill = (field: string, value: number | undefined) => {
    if (!present(spec[field]) && value !== undefined) spec[field] = value;
  };
  const get = (field: string): number | undefined => {
    const value = spec[field];
    return present(value) ? value : undefined;
  };
  const twice = (field: string) => {
    const value = get(field);
    return value === undefined ? undefined : value * 2;
  };
  const twiceCpu = (field: string) => {
    const value = get(field);
    return value === undefined ? undefined : doubleTenths(value);
  };
  fill("cpu_limit", twiceCpu("cpu"));
  fill("memory_limit_mb", twice("memory_mb"));
  fill("queue_min_scale", get("min_scale"));
  fill("queue_max_scale", get("max_scale"));
  fill("queue_cpu", get("cpu"));
  fill("queue_cpu_limit", twiceCpu("queue_cpu"));
  fill("queue_memory_mb", get("memory_mb"));
  fill("queue_memory_limit_mb", twice("queue_memory_mb"));
  fill("redis_cpu_limit", twiceCpu("redis_cpu"));
  fill("redis_memory_limit_mb", get("redis_memory_mb"));
  fill("db_cpu_limit", twiceCpu("db_cpu"));
  fill("db_memory_limit_mb", twice("db_memory_mb"));
  return spec;
}
