import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { escapeControls } from "../errors.js";
import type { LockHolder } from "./lock-types.js";

// Who holds a lock: written with it so a blocked run can name the holder. Informational only: no
// decision reads `since` (a timestamp of another clock); expiry is judged by watching renewals.

export const newHolder = (command: string, now: number): LockHolder => ({
  id: randomUUID(),
  host: hostname(),
  pid: process.pid,
  command,
  since: new Date(now).toISOString(),
});

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
    };
  } catch {
    return null;
  }
}

/** A holder on this host whose process is gone (kill -9, crash): its lock is stale at once. */
export function isDeadLocalHolder(holder: LockHolder): boolean {
  // (This very process is alive too: signal 0 to itself succeeds.)
  if (holder.host !== hostname()) return false;
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
