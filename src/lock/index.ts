import { resolveStatusDir, type StatusLocation } from "../reconcile/status-source.js";
import { acquireLocalLock, forceLocalUnlock, readLocalLock } from "./local-lock.js";
import type { LockHolder, LockOptions, LockTarget, StateLock } from "./lock-types.js";

// The state lock: one writer per status store (apply, adopt, the controller); plan and drift,
// which only read, never take it. See docs/status.md "State lock".

export type { LockHolder, LockOptions, LockTarget, StateLock } from "./lock-types.js";
export { DEFAULT_LEASE_MS } from "./lock-types.js";
export { describeHolder } from "./holder.js";

export const lockTargetOf = (location: StatusLocation): LockTarget => ({
  statusDir: resolveStatusDir(location),
});

/** Takes the lock (waiting up to options.timeoutMs) and renews it until released; state-locked otherwise. */
export const acquireStateLock = (target: LockTarget, options: LockOptions): Promise<StateLock> =>
  acquireLocalLock(target, options);

/** The current holder, or null when the store is not locked. */
export const readStateLock = (target: LockTarget): Promise<LockHolder | null> => readLocalLock(target);

/** Removes the lock whoever holds it; returns who held it (null: it was not locked). */
export const forceUnlock = (target: LockTarget): Promise<LockHolder | null> => forceLocalUnlock(target);
