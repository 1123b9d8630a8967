import { readFileSync } from "node:fs";
import type { Clock } from "../clock.js";
import type { PushFence } from "../git/fenced-push.js";
import type { GitStop } from "../git/stoppable-git.js";

// The state lock's shapes: one writer per status store at a time (apply, adopt, the controller).

/** Who holds the lock; written beside it so a blocked run can name the holder. */
export type LockHolder = {
  id: string;
  host: string;
  pid: number;
  command: string;
  since: string;
  /** Where `pid` names a process (Linux: PID namespace and boot, holder.ts); absent elsewhere and in older records. */
  space?: string;
  /** Read only (plumb unlock): its lock was ended by plumb unlock --force, free once unrenewed for its lease. */
  forced?: true;
};

/** Milliseconds on a clock that only moves forward and keeps running while the process is stopped. */
export type Monotonic = () => number;

/**
 * performance.now() (CLOCK_MONOTONIC: fine, but it stops while the machine is suspended), moved on
 * by the time since boot (`boot`, ms, counting suspend) when that went further. A holder whose
 * machine slept (a laptop's lid, a VM suspended) through its lease judged it on performance.now()
 * alone: still good on waking, it sent at once, and its renewal timer, on that clock too, came only
 * a third of a lease later; meanwhile a standby elsewhere had taken over. Pure: sources injected.
 */
export function suspendAware(hr: () => number, boot: () => number | undefined): Monotonic {
  const start = { hr: hr(), boot: boot() };
  return () => {
    const now = hr();
    const since = start.boot === undefined ? undefined : boot();
    if (start.boot === undefined || since === undefined) return now;
    return start.hr + Math.max(now - start.hr, since - start.boot);
  };
}

/** The time since boot, suspend included (Linux: /proc/uptime, 10 ms steps); undefined elsewhere. */
export function bootMs(): number | undefined {
  try {
    const seconds = Number.parseFloat(readFileSync("/proc/uptime", "utf8"));
    return Number.isFinite(seconds) ? seconds * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export const systemMonotonic: Monotonic = suspendAware(() => performance.now(), bootMs);

export type LockTarget = {
  /** The resolved status directory: the lock lives beside it (`<dir>.lock`), never inside. */
  statusDir: string;
  /** Manifest directory (in the repository of the status branch). */
  root?: string | undefined;
  /** With a status branch, a lease in its remote is held too (branch/). */
  statusBranch?: string | undefined;
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the lease's git commands over the network end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** With environments: the environment's store, whose branch lease is its own (`BRANCH@ENV`). */
  environment?: string | undefined;
};

export type LockOptions = {
  /** "plumb apply", "plumb adopt", "plumb controller". */
  command: string;
  /** Wait this long for a held lock (default 0: fail at once); Infinity waits until `signal` aborts. */
  timeoutMs?: number;
  /**
   * A waiter takes the lock once it has seen the same renewal for this long on its own monotonic
   * clock (default 30 s); the holder stops writing after two thirds of it without a renewal.
   */
  leaseMs?: number;
  /** How often the holder renews (default a third of the lease, at least 1 s). */
  renewMs?: number;
  /** How often a waiter looks again (default 1 s). */
  retryMs?: number;
  /** Wall time: only for the `since` shown to people and the timeout of waiting. */
  clock?: Clock;
  /** Every lease decision (expiry, the holder's own validity); default performance.now. */
  monotonic?: Monotonic;
  signal?: AbortSignal;
  /** Told why a lock there was not trusted and taken (one committed to git: committed-lock.ts). */
  say?: (line: string) => void;
};

export type StateLock = {
  holder: LockHolder;
  /** Aborted when the lock was lost (renewal failed, or someone forced it). */
  lost: AbortSignal;
  /**
   * Throws lock-lost (and aborts `lost`) unless the lease is still good on this process's monotonic
   * clock: called immediately before every write leaves (a request, a status record, a push).
   */
  assertHeld: () => void;
  /** Its hold on status-branch pushes: checked first; with a lease, swapped in the same push. */
  pushFence: PushFence;
  /** Stops renewing and removes the lock (idempotent). */
  release(): Promise<void>;
};

export const DEFAULT_LEASE_MS = 30_000;
