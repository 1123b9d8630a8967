import { gitFailure } from "../../git/status/status-branch.js";
import type { LockHolder } from "../lock-types.js";
import { IDENTITY, leaseRef, type Remote } from "./remote.js";

// The lease commit: read (a fetch of the lease ref) and written (a compare-and-swap push).

export type Lease = {
  holder: LockHolder;
  /** The holder's store on the branch (REL/.plumb/status/(ENV/)); absent in an older plumb's lease. */
  store?: string;
  expires_at: string;
  lease_ms?: number;
  renewals?: number;
  /** Ended by plumb unlock --force (unlock.ts): its holder may still run until its lease ends. */
  forced?: { at: string };
};
export type Seen = { sha: string; lease: Lease | null } | null;

/** What git says when another push changed the ref first (file and smart-HTTP remotes). */
const LOST_RACE =
  /stale info|cannot lock ref|reference already exists|failed to update ref|but expected|fetch first/i;

/** Exported for the tests of a lease that cannot be read. */
export async function readLease(
  remote: Pick<Remote, "git" | "net" | "source">,
  branch: string,
): Promise<Seen> {
  try {
    return await readLeaseUnchecked(remote, branch);
  } catch (error) {
    throw gitFailure(
      error,
      "status-branch-read-failed",
      `could not read the lease of status branch ${branch}`,
    );
  }
}

/** Where a look at the lease keeps the commit it fetched (in the scratch repository). */
const SEEN = "refs/seen/lease";

/** What git's fetch says of a ref the remote does not have: no lease. */
const NO_LEASE = /couldn't find remote ref/i;

/**
 * One fetch of the lease ref, then one log of what it fetched (its id and message): two processes
 * and one round trip to the remote. An ls-remote first, then the fetch of the commit it named, was
 * one more of each, and a lease released between the two had to be looked at again. The scratch
 * repository runs no automatic maintenance after the fetch (scratch-prune.ts keeps it small).
 */
async function readLeaseUnchecked(
  remote: Pick<Remote, "git" | "net" | "source">,
  branch: string,
): Promise<Seen> {
  const ref = leaseRef(branch);
  try {
    await remote.net([
      ...["-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags"],
      ...[remote.source, `+${ref}:${SEEN}`],
    ]);
  } catch (error) {
    if (NO_LEASE.test(String(error))) return null;
    throw error;
  }
  const out = await remote.git.raw(["log", "-1", "--format=%H%n%B", SEEN]);
  // Stryker disable next-line StringLiteral: equivalent, git log of the ref it fetched always prints its id
  const [sha = "", ...message] = out.split("\n");
  // Stryker disable next-line StringLiteral: equivalent, a lease message is JSON, whose line breaks are whitespace between tokens
  return { sha, lease: parseLease(message.join("\n")) };
}

/** A lease commit's message, or null when it names no holder (not ours to read: treated as expired). */
function parseLease(message: string): Lease | null {
  try {
    const data = JSON.parse(message) as { holder?: Partial<LockHolder> } | null;
    if (typeof data?.holder?.host !== "string" || typeof data.holder.pid !== "number") return null;
    return data as Lease;
  } catch {
    return null;
  }
}

/**
 * CAS: points the lease ref at a new lease commit if it still is `expected` (null: absent).
 * `onCommit` learns the new commit before the push leaves (a renewal in flight, see renewNow).
 */
export async function writeLease(
  remote: Remote,
  branch: string,
  lease: Lease,
  expected: string | null,
  onCommit?: (commit: string) => void,
): Promise<string | null> {
  const commit = (
    await remote.git.raw([...IDENTITY, "commit-tree", remote.tree, "-m", JSON.stringify(lease)])
  ).trim();
  onCommit?.(commit);
  const ref = leaseRef(branch);
  try {
    await remote.net([
      "push",
      "--quiet",
      `--force-with-lease=${ref}:${expected ?? ""}`,
      remote.source,
      `${commit}:${ref}`,
    ]);
    return commit;
  } catch (error) {
    // The compare-and-swap lost: someone else changed the lease first.
    if (LOST_RACE.test((error as Error).message)) return null;
    throw gitFailure(
      error,
      "status-branch-push-failed",
      `could not write the lease of status branch ${branch}`,
    );
  }
}
