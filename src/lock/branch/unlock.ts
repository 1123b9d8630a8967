import type { LockHolder } from "../lock-types.js";
import { readLease } from "./lease-record.js";
import { type LeaseTarget, leaseRef, openRemote } from "./remote.js";

// `plumb unlock [--force] --status-branch B`: who holds the lease, and its removal.

/** The lease holder (even if expired), or null. */
export async function readBranchLease(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    return (await readLease(remote, target.branch))?.lease?.holder ?? null;
  } finally {
    await remote.close();
  }
}

/** Deletes the lease whoever holds it; returns who held it. */
export async function forceBranchUnlock(target: LeaseTarget): Promise<LockHolder | null> {
  const remote = await openRemote(target);
  try {
    const seen = await readLease(remote, target.branch);
    // Stryker disable next-line ConditionalExpression: equivalent, git deletes a missing ref without error (one push saved)
    if (seen) await remote.net(["push", "--quiet", "--force", remote.source, `:${leaseRef(target.branch)}`]);
    return seen?.lease?.holder ?? null;
  } finally {
    await remote.close();
  }
}
