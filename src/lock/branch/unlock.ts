import { PlumbError } from "../../errors.js";
import { isDeadLocalHolder } from "../holder.js";
import type { LockHolder } from "../lock-types.js";
import { readLease, writeLease } from "./lease-record.js";
import { type LeaseTarget, leaseRef, openRemote } from "./remote.js";

// `plumb unlock [--force] --status-branch B`: who holds the lease, and its end (or removal).

/** The lease holder (even if expired), or null. */
export async function readBranchLease(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    const lease = (await readLease(remote, target.branch))?.lease;
    if (!lease) return null;
    return lease.forced ? { ...lease.holder, forced: true } : lease.holder;
  } finally {
    await remote.close();
  }
}

/**
 * Ends the lease whoever holds it; returns who held it. A holder that may still run (not a process of
 * this host that is gone) has its lease ended, not deleted: a commit naming it `forced` replaces its
 * own (compare-and-swap), so its next renewal or status push fails and it stops, and a waiter takes
 * it only once it saw that commit unchanged for the holder's whole lease, as for any holder that
 * stopped. Deleted, the next writer took it at once while the holder still sent until its next
 * renewal (up to a third of a lease). A lease naming no holder (not plumb's) is deleted as before.
 */
export async function forceBranchUnlock(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const seen = await readLease(remote, target.branch);
      if (seen?.lease?.forced) return seen.lease.holder; // ended already: left to run out
      if (!seen?.lease || isDeadLocalHolder(seen.lease.holder)) {
        // Stryker disable next-line ConditionalExpression: equivalent, git deletes a missing ref without error (one push saved)
        if (seen)
          await remote.net(["push", "--quiet", "--force", remote.source, `:${leaseRef(target.branch)}`]);
        return seen?.lease?.holder ?? null;
      }
      const ended = { ...seen.lease, forced: { at: new Date().toISOString() } };
      if (await writeLease(remote, target.branch, ended, seen.sha)) return seen.lease.holder;
      // Renewed between the look and the push: look again.
    }
    throw new PlumbError(
      "state-locked",
      `the lease of status branch ${target.branch} was renewed at each of ${ATTEMPTS} tries to end it: run plumb unlock --force again`,
    );
  } finally {
    await remote.close();
  }
}

const ATTEMPTS = 10;
