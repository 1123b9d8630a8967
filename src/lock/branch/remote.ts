import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { statusGitEnv } from "../../git/git-env.js";
import { gitAt, networkGit, repoInfo } from "../../git/status/status-branch.js";
import { type GitStop, runNetworkGitSync } from "../../git/stoppable-git.js";

// The lease of a status branch, held in the git remote itself so that writers on different machines
// (CI runners, pods) exclude each other: the ref refs/plumb/locks/<branch> points to a commit whose
// message is {holder, store, lease_ms, renewals, expires_at}. Every change is a compare-and-swap push
// (--force-with-lease=<ref>:<sha seen>, empty: must not exist), so of two writers racing only one
// push lands. The holder renews it (a new commit) every third of the lease and stops writing two
// thirds of a lease after its last renewal began (fence.ts). A waiter takes it over only after it has
// seen the same commit for the holder's whole lease_ms on its own monotonic clock (observer.ts), or at
// once when the holder is a process of this host that is gone; expires_at is for people to read,
// never compared: clocks of different machines need not agree.
//
// One lease per branch (per environment: BRANCH@ENV), whichever store on it its holder writes:
// writers in separate clones on a tree and a directory of it (both reconcile what is under it)
// exclude each other through it, as the local locks of the stores nearby do on one machine
// (locks-in-order.ts). `store` (the holder's store on the branch) is for the refusal to name.
//
// Here: the remote and its scratch repository. lease-record.ts reads and writes the lease commit,
// acquire.ts takes it (waiting), renewal.ts renews it (on a timer, and on the spot at a write),
// held-lease.ts is what its holder uses (withLease, release), unlock.ts reads and forces it.

export type LeaseTarget = {
  root: string;
  branch: string;
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: the lease's git commands over the network end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** With environments: the holder's store is ENV/ of the manifest directory's (named in the lease). */
  environment?: string | undefined;
};

export const leaseRef = (branch: string) => `refs/plumb/locks/${branch}`;

/** A scratch repository and the git environment (credentials) to talk to the remote. */
export async function openRemote(target: LeaseTarget) {
  const info = await repoInfo(target);
  const env = await statusGitEnv(info, target.gitEnv);
  const scratch = await mkdtemp(join(tmpdir(), "plumb-lease-"));
  const git = gitAt(env.env, scratch);
  // Stryker disable next-line BooleanLiteral: equivalent, a scratch repository's work tree is never used
  await git.init(true);
  const tree = await emptyTree(scratch, git);
  return {
    source: info.source,
    store: info.pathOnBranch,
    git,
    /** ls-remote, fetch and push: in a process group the controller's stop ends (stoppable-git.ts). */
    net: networkGit({ gitEnv: env.env, gitStop: target.gitStop }, scratch),
    tree,
    scratch,
    /**
     * git run synchronously, for a renewal on the spot (renewNow): the same environment, and as `net`
     * a process group of its own, ended as a whole at the timeout and bounded by the controller's stop.
     */
    gitSync: (args: string[], timeoutMs: number) =>
      runNetworkGitSync(args, { cwd: scratch, env: env.env, timeoutMs, stop: target.gitStop }),
    close: async () => {
      await env.dispose();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

export type Remote = Awaited<ReturnType<typeof openRemote>>;

/** The empty tree's id in SHA-1, the object format of a repository whose config names none. */
export const EMPTY_TREE_SHA1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/**
 * The tree of the lease commits, which carry no files: the empty tree, which git knows without it
 * being written (and sends in a push as any other). Its SHA-1 id in a SHA-1 repository, no git
 * process; in another object format (init.defaultObjectFormat, GIT_DEFAULT_HASH) written once.
 */
export async function emptyTree(scratch: string, git: Pick<Remote["git"], "raw">): Promise<string> {
  const config = String(await readFile(join(scratch, "config")).catch(() => "objectformat?"));
  // (git writes the key in lower case: extensions.objectformat)
  if (!/objectformat/.test(config)) return EMPTY_TREE_SHA1;
  return (await git.raw(["hash-object", "-t", "tree", "-w", "/dev/null"])).trim();
}

export const IDENTITY = ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];
