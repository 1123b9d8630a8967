import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { escapeControls } from "../errors.js";
import type { LockHolder } from "./lock-types.js";

// Who holds a lock: written with it so a blocked run can name the holder. Informational only: no
// decision reads `since` (a timestamp of another clock); expiry is judged by watching renewals.

/** This process's space (holder.space), read once: it never changes while the process runs. */
const PROCESS_SPACE = readSpace();

export const newHolder = (command: string, now: number): LockHolder => {
  const space = PROCESS_SPACE;
  return {
    id: randomUUID(),
    host: hostname(),
    pid: process.pid,
    command,
    since: new Date(now).toISOString(),
    ...(space === undefined ? {} : { space }),
  };
};

/**
 * Where a pid names a process: this PID namespace on this boot (Linux). A host name does not say it:
 * containers sharing the host's name (docker --network host, a pod with hostNetwork, a fixed
 * hostname) each count pids of their own, and machines may share a name (cloned VMs).
 */
function readSpace(): string | undefined {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return `${readlinkSync("/proc/self/ns/pid")}@${boot}`;
  } catch {
    return undefined; // no /proc (macOS, Windows): no PID namespaces to tell apart
  }
}

/** A holder record as written (JSON), or null when it is not one. */
export function parseHolder(text: string): (LockHolder & { lease_ms?: number }) | null {
  try {
    const data = JSON.parse(text) as Partial<LockHolder & { lease_ms: unknown }>;
    if (typeof data.host !== "string" || typeof data.pid !== "number") return null;
    return {
      id: String(data.id ?? ""),
      host: data.host,
      pid: data.pid,
      command: String(data.command ?? "plumb"),
      since: String(data.since ?? ""),
      ...(typeof data.lease_ms === "number" && data.lease_ms > 0 ? { lease_ms: data.lease_ms } : {}),
      ...(typeof data.space === "string" ? { space: data.space } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * A holder on this host whose process is gone (kill -9, crash): its lock is stale at once. Only when
 * its pid is one of this process space (a record that names none, an older plumb's, is taken as
 * this host's as before): a holder of the same host name in another container was taken for gone
 * when its pid did not exist here, and two writers ran at once.
 */
export function isDeadLocalHolder(holder: LockHolder): boolean {
  // (This very process is alive too: signal 0 to itself succeeds.)
  if (holder.host !== hostname()) return false;
  if (holder.space !== undefined && holder.space !== PROCESS_SPACE) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** "plumb apply (pid 123 on build-7) since 2026-11-22T10:00:00.000Z" */
export const describeHolder = (holder: LockHolder): string =>
  // Read from a lock file (a clone's, a status branch's): control characters escaped, not printed.
  escapeControls(
    `${holder.command} (pid ${holder.pid} on ${holder.host}) since ${holder.since || "an unknown time"}`,
  );
