import type { SimpleGit } from "simple-git";

// The state lock's hold on a status-branch push. check() runs immediately before the push leaves
// (the holder's own lease deadline, src/lock/fence.ts). With a lease in the git remote
// (src/lock/branch/held-lease.ts) the push also carries the lease's renewal: one atomic push updates the
// status branch and moves refs/plumb/locks/<branch> from the commit the holder holds to a new one
// (--atomic --force-with-lease), so the status lands only if the lease is still this holder's. A
// writer whose lease was taken (forced, or taken over while it was stopped) cannot overwrite the new
// holder's records, however late its push arrives.

/**
 * A compare-and-swap of the lease ref: it must still be `expected`; the new lease says `message`,
 * in a commit of `tree` (the empty tree of the lease's own scratch repository, whose object format
 * is the remote's: else neither would push there), written here when not given.
 */
type LeaseSwap = { ref: string; expected: string; message: string; tree?: string };

export type PushFence = {
  /** Throws lock-lost when the holder's lease lapsed. */
  check(): void;
  /** Runs `push` with the lease to swap; `push` resolves to the new lease commit, or null if taken. */
  withLease?: (push: (lease: LeaseSwap) => Promise<string | null>) => Promise<void>;
};

const IDENTITY = ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];

/** git's answer for the lease ref when it was not what we held (client- or server-side). */
const leaseRejected = (error: unknown, ref: string): boolean =>
  String((error as Error).message ?? error)
    .split("\n")
    .some((line) => line.includes(ref) && /stale info|remote rejected/.test(line));

const atomicAmbiguous = (error: unknown): boolean =>
  String((error as Error).message ?? error).includes("atomic transaction failed");

/** git over the network: the push and the ls-remote (status-branch.ts's networkGit: stoppable). */
type NetworkGit = (args: readonly string[]) => Promise<string>;

/** The commit `ref` names on the remote now ("" when it does not exist). */
const remoteRef = async (network: NetworkGit, ref: string): Promise<string> =>
  (await network(["ls-remote", "origin", ref])).split(/\s/)[0] ?? "";

/** Pushes the clone's HEAD to `branch`; with a lease, atomically with the lease's renewal. */
export async function fencedPush(
  git: SimpleGit,
  branch: string,
  fence: PushFence | undefined,
  network: NetworkGit = (args) => git.raw([...args]),
): Promise<void> {
  fence?.check();
  const head = `HEAD:refs/heads/${branch}`;
  if (!fence?.withLease) {
    await network(["push", "--quiet", "origin", head]);
    return;
  }
  await fence.withLease(async (lease) => {
    const tree = lease.tree ?? (await git.raw(["hash-object", "-t", "tree", "-w", "/dev/null"])).trim();
    const commit = (await git.raw([...IDENTITY, "commit-tree", tree, "-m", lease.message])).trim();
    try {
      await network([
        ...["push", "--quiet", "--atomic", `--force-with-lease=${lease.ref}:${lease.expected}`],
        ...["origin", head, `${commit}:${lease.ref}`],
      ]);
      return commit;
    } catch (error) {
      if (!leaseRejected(error, lease.ref)) throw error;
      // A server refusing an atomic push marks every ref "atomic transaction failed", whichever
      // one failed: a status push racing another environment's push to the same branch (each
      // with a lease of its own) reads like a taken lease. The lease ref itself decides.
      if (atomicAmbiguous(error) && (await remoteRef(network, lease.ref)) === lease.expected) throw error;
      return null;
    }
  });
}
