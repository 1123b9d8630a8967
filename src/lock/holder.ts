import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import writeFileAtomic from "write-file-atomic";
import type { LockHolder } from "./lock-types.js";

// The holder record beside the lock (`<dir>.lock.json`): who, where, since when. Informational:
// the lock itself is proper-lockfile's directory; this file only lets others name the holder.

const holderFile = (lockPath: string): string => `${lockPath}.json`;

export const newHolder = (command: string, now: number): LockHolder => ({
  id: randomUUID(),
  host: hostname(),
  pid: process.pid,
  command,
  since: new Date(now).toISOString(),
});

export async function readHolder(lockPath: string): Promise<LockHolder | null> {
  try {
    const data = JSON.parse(await readFile(holderFile(lockPath), "utf8")) as Partial<LockHolder>;
    if (typeof data.host !== "string" || typeof data.pid !== "number") return null;
    return {
      id: String(data.id ?? ""),
      host: data.host,
      pid: data.pid,
      command: String(data.command ?? "plumb"),
      since: String(data.since ?? ""),
    };
  } catch {
    return null;
  }
}

export const writeHolder = (lockPath: string, holder: LockHolder) =>
  writeFileAtomic(holderFile(lockPath), `${JSON.stringify(holder, null, 2)}\n`, { mode: 0o644 });

export const removeHolder = (lockPath: string) => rm(holderFile(lockPath), { force: true });

/** A holder on this host whose process is gone (kill -9, crash): its lock is stale at once. */
export function isDeadLocalHolder(holder: LockHolder): boolean {
  if (holder.host !== hostname() || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** "plumb apply (pid 123 on build-7) since 2026-11-22T10:00:00.000Z" */
export const describeHolder = (holder: LockHolder): string =>
  `${holder.command} (pid ${holder.pid} on ${holder.host}) since ${holder.since || "an unknown time"}`;
