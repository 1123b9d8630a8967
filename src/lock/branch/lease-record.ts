import { gitFailure } from "../../git/status/status-branch.js";
import type { LockHolder } from "../lock-types.js";
import { IDENTITY, leaseRef, type Remote } from "./remote.js";

// The lease commit: read (ls-remote, then fetch of what it names) and written (a compare-and-swap push).

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

/** Exported for the race test (a lease released between ls-remote and fetch). */
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

/** The lease ref went away between ls-remote and fetch: its holder released it meanwhile. */
const RELEASED_MEANWHILE = /couldn't find remote ref/i;

async function readLeaseUnchecked(
  remote: Pick<Remote, "git" | "net" | "source">,
  branch: string,
  attempt = 0,
): Promise<Seen> {
  const ref = leaseRef(branch);
  // Stryker disable next-line MethodExpression: equivalent, the first field is the same with or without the line's end
  const out = (await remote.net(["ls-remote", remote.source, ref])).trim();
  // Stryker disable next-line Regex: equivalent, ls-remote separates the sha by one tab
  const sha = out.split(/\s+/)[0];
  if (!sha) return null;
  try {
    await remote.net(["fetch", "--quiet", "--no-tags", remote.source, `+${ref}:refs/seen/lease`]);
  } catch (error) {
    // Look again: released (no ref now) or re-taken (a new one to read). Seen once in CI as a
    // standby's startup failure while the leader released on SIGTERM.
    if (attempt < 3 && RELEASED_MEANWHILE.test(String(error)))
      return readLeaseUnchecked(remote, branch, attempt + 1);
    throw error;
  }
  const message = await remote.git.raw(["log", "-1", "--format=%B", "refs/seen/lease"]);
  return { sha, lease: parseLease(message) };
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
