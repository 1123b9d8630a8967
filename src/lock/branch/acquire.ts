import { systemClock } from "../../clock.js";
import { escapeControls, PlumbError } from "../../errors.js";
import { describeHolder, isDeadLocalHolder } from "../holder.js";
import { type LockHolder, systemMonotonic } from "../lock-types.js";
import { createObserver } from "../observer.js";
import { scratchPrune } from "./scratch-prune.js";
import { type BranchLease, startRenewing } from "./held-lease.js";
import { type Lease, readLease, type Seen, writeLease } from "./lease-record.js";
import { type LeaseTarget, openRemote } from "./remote.js";
import type { LeaseOptions } from "./renewal.js";

// Taking the status branch lease: looked at every retryMs until free or the timeout (remote.ts says
// what the lease is and when a waiter may take it over).

/**
 * ", writing its store REL/.plumb/status on it (…)" when the lease names the holder's store: one
 * lease covers every store of the branch, so a writer of another directory learns why it waits.
 * Read from the remote: control characters escaped.
 */
function storeHeld(lease: Lease | null | undefined): string {
  if (typeof lease?.store !== "string") return "";
  return `, writing its store ${escapeControls(lease.store)} (one lease for every store on the branch)`;
}

function leasedError(branch: string, lease: Lease | null | undefined, leaseMs: number): PlumbError {
  const other = lease ? describeHolder(lease.holder) : "another plumb process";
  if (lease?.forced) {
    const secs = Math.ceil((lease.lease_ms ?? leaseMs) / 1000);
    return new PlumbError(
      "state-locked",
      `the status branch ${branch} was forced free (plumb unlock --force) from ${other}${storeHeld(lease)}, which may still be running until its lease ends: it is free once it has gone ${secs} s unrenewed; wait, or pass --lock-timeout ${secs + 10}s`,
    );
  }
  return new PlumbError(
    "state-locked",
    `the status branch ${branch} is leased by ${other}${storeHeld(lease)}; wait, pass --lock-timeout, or if that process is gone run: plumb unlock --force --status-branch ${branch}`,
  );
}

/** Free to take: none, ours, its local process gone, or the same commit seen for its whole lease. */
const takeable = (
  seen: Seen,
  holder: LockHolder,
  expired: (token: string, ms: number) => boolean,
  leaseMs: number,
) =>
  !seen ||
  (!seen.lease?.forced && seen.lease?.holder.id === holder.id) ||
  (seen.lease !== null && isDeadLocalHolder(seen.lease.holder)) ||
  expired(seen.sha, seen.lease?.lease_ms ?? leaseMs);

export async function acquireBranchLease(
  target: LeaseTarget,
  holder: LockHolder,
  options: LeaseOptions,
): Promise<BranchLease> {
  const clock = options.clock ?? systemClock;
  const monotonic = options.monotonic ?? systemMonotonic;
  const remote = await openRemote(target);
  const deadline = clock.now() + options.timeoutMs;
  let renewals = 0;
  const next = (): Lease => ({
    holder,
    store: remote.store,
    lease_ms: options.leaseMs,
    renewals: renewals++,
    expires_at: new Date(clock.now() + options.leaseMs).toISOString(),
  });
  const observer = createObserver(monotonic);
  const olderThanMs = options.pruneAfterMs ?? Math.max(600_000, 2 * options.leaseMs);
  const prune = scratchPrune(remote.git, olderThanMs, options.pruneEvery);
  try {
    for (;;) {
      const seen = await readLease(remote, target.branch);
      await prune();
      const startedAt = monotonic();
      if (takeable(seen, holder, observer.expired, options.leaseMs)) {
        const current = await writeLease(remote, target.branch, next(), seen?.sha ?? null);
        if (current)
          return startRenewing(remote, target.branch, current, next, { ...options, startedAt }, prune);
      }
      if (options.signal?.aborted) throw options.signal.reason;
      if (clock.now() >= deadline) throw leasedError(target.branch, seen?.lease, options.leaseMs);
      await clock.sleep(Math.min(options.retryMs, Math.max(1, deadline - clock.now())), options.signal);
    }
  } catch (error) {
    await remote.close();
    throw error;
  }
}
