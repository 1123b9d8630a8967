import { readFileSync } from "node:fs";

// The clock since boot, which no step of the wall clock moves (Linux: CLOCK_BOOTTIME as /proc/uptime
// gives it, suspend included, shared by every process and container on the machine's kernel),
// named by the boot it belongs to. The prune ledger stamps each deletion with it, so on the same
// boot --prune-window is also judged by it (prune-ledger.ts).

/** A machine's boot (its kernel's boot_id) and the milliseconds since it. */
export type BootReading = { id: string; ms: number };

/** Now on the clock since boot; undefined where there is none to read (not Linux). */
export function bootReading(): BootReading | undefined {
  try {
    const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const seconds = Number.parseFloat(readFileSync("/proc/uptime", "utf8"));
    return id !== "" && Number.isFinite(seconds) ? { id, ms: Math.round(seconds * 1000) } : undefined;
  } catch {
    return undefined;
  }
}

/** A ledger entry's reading, when it is one (an older entry has none; a malformed one counts as none). */
export const isBootReading = (value: unknown): value is BootReading => {
  const v = value as Partial<BootReading> | null;
  return typeof v === "object" && v !== null && typeof v.id === "string" && Number.isFinite(v.ms);
};
