import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PlumbError } from "../../errors.js";
import { fencedPush, type PushFence } from "../fenced-push.js";
import { PRUNE_LEDGER_FILE } from "../../status/prune-ledger.js";
import { trackedRecords } from "./tracked-records.js";
import { GitStopped } from "../stoppable-git.js";
import {
  gitAt,
  gitFailure,
  inTurn,
  networkGit,
  type RepoInfo,
  repoInfo,
  type StatusBranchTarget,
  withStatusGitEnv,
} from "../status/status-branch.js";

// Publishing a store's records to the status branch (status-branch.ts): committed in a temporary
// clone and pushed, fenced by the state lock.

const GIT_IDENTITY = ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];

function assertNotManifestBranch(info: RepoInfo, branch: string): void {
  if (branch === info.current) {
    throw new PlumbError(
      "status-branch-is-manifest-branch",
      `--status-branch ${branch} is the branch the manifests come from; choose another (e.g. plumb-status)`,
    );
  }
}

export type PublishResult = { branch: string; commit: string | null; pushed: boolean };

/**
 * The text of the writer's own record named `file` (`deployment.NAME.json`), when it holds one. A
 * file git tracks in the store is not published (it is the commit's, tracked-records.ts), but a
 * commit can put one at the path of a record the writer keeps (a controller's checkout, reset to
 * the commit, has the committed file there): the writer's own record is published in its place.
 */
export type OwnRecords = (file: string) => string | undefined;

/**
 * Commits the records of `statusDir` to `branch` (under `<root>/.plumb/status/` on that branch) and
 * pushes. Retries a few times when a concurrent run pushed first. Returns commit null when the branch
 * already held exactly these records.
 */
export async function publishStatusBranch(
  target: StatusBranchTarget,
  statusDir: string,
  message: string,
  fence?: PushFence,
  own?: OwnRecords,
): Promise<PublishResult> {
  fence?.check(); // a writer that lost the state lock publishes nothing: the branch is someone else's
  const info = await repoInfo(target);
  assertNotManifestBranch(info, target.branch);
  const publish = () =>
    withStatusGitEnv(
      info,
      "status-branch-push-failed",
      `could not push status to branch ${target.branch}`,
      (withCredentials) => publishIn(withCredentials, target, { statusDir, own }, message, fence),
    );
  // With a remote the work is in a temporary clone of the remote, and the checkout only read; without
  // one the clone is of the checkout and the push goes into it.
  return info.hasRemote ? publish() : inTurn(target, publish);
}

/** The store a publish mirrors: its directory, and the writer's own records (OwnRecords). */
type PublishedStore = { statusDir: string; own?: OwnRecords | undefined };

async function publishIn(
  info: RepoInfo,
  target: StatusBranchTarget,
  store: PublishedStore,
  message: string,
  fence: PushFence | undefined,
): Promise<PublishResult> {
  const tmp = await mkdtemp(join(tmpdir(), "plumb-status-"));
  try {
    for (let attempt = 1; ; attempt++) {
      const work = join(tmp, `clone-${attempt}`);
      const result = await commitInClone(info, target.branch, store, message, work);
      if (result.commit === null) return { branch: target.branch, commit: null, pushed: false };
      try {
        // Fenced again after the clone and commit: the lease checked, and swapped in the same push.
        await fencedPush(gitAt(info.gitEnv, work), target.branch, fence, networkGit(info, work));
        return { branch: target.branch, commit: result.commit, pushed: true };
      } catch (error) {
        // lock-lost, and a push the controller's stop ended: never retried
        if (error instanceof PlumbError || error instanceof GitStopped) throw error;
        if (attempt >= 3) {
          throw gitFailure(
            error,
            "status-branch-push-failed",
            `could not push status to branch ${target.branch}`,
          );
        }
      }
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** What git's clone says of a branch the remote does not have. */
const NO_BRANCH = /remote branch .* not found in upstream/i;

/**
 * A shallow clone of `branch` into `work`; false when the remote has no such branch yet (its first
 * use). The clone itself says so: no ls-remote first (a process and a round trip to the remote).
 */
async function cloneBranch(info: RepoInfo, branch: string, work: string): Promise<boolean> {
  const clone = ["clone", "--depth", "1", "--single-branch", "--branch", branch, "--"];
  try {
    await networkGit(info, info.top)([...clone, info.source, work]);
    return true;
  } catch (error) {
    if (NO_BRANCH.test(String(error))) return false;
    throw error;
  }
}

async function commitInClone(
  info: RepoInfo,
  branch: string,
  { statusDir, own }: PublishedStore,
  message: string,
  work: string,
): Promise<{ commit: string | null }> {
  if (!(await cloneBranch(info, branch, work))) {
    await mkdir(work, { recursive: true });
    await gitAt(info.gitEnv, work).init().addRemote("origin", info.source).checkout(["--orphan", branch]);
  }
  const git = gitAt(info.gitEnv, work);
  const dest = join(work, info.pathOnBranch);
  // The branch mirrors the store: records removed locally disappear from the branch too.
  await rm(dest, { recursive: true, force: true });
  await mkdir(dest, { recursive: true });
  // The records, and the prune ledger (prune-ledger.ts), so the next run's --prune-max counts it;
  // never a record git tracks in the manifests' branch (tracked-records.ts): in its place the
  // writer's own record of that name, when it holds one (OwnRecords).
  const tracked = await trackedRecords(statusDir);
  for (const name of await readdir(statusDir).catch(() => [] as string[])) {
    const mine = tracked.has(name) ? own?.(name) : undefined;
    if (mine !== undefined) await writeFile(join(dest, name), mine);
    else if ((name.endsWith(".json") && !tracked.has(name)) || name === PRUNE_LEDGER_FILE)
      await cp(join(statusDir, name), join(dest, name));
  }
  await git.raw(["add", "--all", "--force", "--", info.pathOnBranch]);
  const staged = (await git.raw(["diff", "--cached", "--name-only"])).trim();
  if (!staged) return { commit: null };
  await git.raw([...GIT_IDENTITY, "commit", "--quiet", "-m", message]);
  return { commit: (await git.revparse(["HEAD"])).trim() };
}
