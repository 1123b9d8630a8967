import { PlumbError } from "../../errors.js";

// How much memory the controller may use, for its heap settings (heap-tuning.ts). A container's
// limit is what counts: PLUMB_MEMORY_LIMIT when given (examples/kubernetes sets it from the
// pod's limits.memory with the downward API), else the cgroup limit Node reads itself.

const MEMORY_LIMIT_ENV = "PLUMB_MEMORY_LIMIT";

const UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
};

/** Bytes of a Kubernetes memory quantity: `268435456`, `256Mi`, `1Gi`, `512M`. */
export function parseMemoryQuantity(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(k|K|M|G|Ki|Mi|Gi)?$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2] ?? ""]!);
  return bytes > 0 ? bytes : undefined;
}

/**
 * The memory limit in bytes, or undefined when there is none: `PLUMB_MEMORY_LIMIT`, else the
 * cgroup limit (`constrained`, from process.constrainedMemory(); 0 or a huge value means none).
 */
export function memoryLimitFrom(env: NodeJS.ProcessEnv, constrained: number | undefined): number | undefined {
  const text = env[MEMORY_LIMIT_ENV];
  if (text !== undefined && text !== "") {
    const bytes = parseMemoryQuantity(text);
    if (bytes === undefined)
      throw new PlumbError(
        "invalid-setting",
        `${MEMORY_LIMIT_ENV} must be a memory size such as 268435456, 256Mi or 1Gi, not "${text}"`,
      );
    return bytes;
  }
  // Node reports "no limit" as 0 (older versions) or as a value near 2^64.
  return constrained && constrained < 2 ** 50 ? constrained : undefined;
}
