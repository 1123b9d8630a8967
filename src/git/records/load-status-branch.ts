import { PRUNE_LEDGER_FILE } from "../../status/prune-ledger.js";
import { type StatusStore, emptyStatusStore } from "../../status/status-types.js";
import { readRecords, readStoresBelow } from "./status-branch-records.js";
import {
  dirOnBranchOf,
  gitAt,
  inTurn,
  networkGit,
  pathOnBranchOf,
  type RepoInfo,
  realTop,
  repoInfo,
  type StatusBranchTarget,
  withStatusGitEnv,
} from "../status/status-branch.js";

/**
 * Reads the records from `branch` of the manifest repository: fetched from the remote when there is
 * one (as in a fresh clone), else the local branch. A branch that does not exist yet is an empty store.
 */
export async function loadStatusFromBranch(target: StatusBranchTarget): Promise<BranchStatusStore> {
  const info = await repoInfo(target);
  // The fetch writes the checkout's objects, refs and FETCH_HEAD: one turn of its queue.
  return inTurn(target, () =>
    withStatusGitEnv(
      info,
      "status-branch-read-failed",
      `could not read status branch ${target.branch}`,
      (withCredentials) => loadFrom(withCredentials, target),
    ),
  );
}

/**
 * The records on the branch, and the text of its prune ledger when it holds one; with
 * `target.above`, the stores of those directories (nearest first); with `target.below`, the stores
 * under root (status-branch-records.ts).
 */
export type BranchStatusStore = StatusStore & {
  pruneLedger?: string;
  above?: StatusStore[];
  below?: StatusStore[];
};

/** What git's fetch says of a branch the remote does not have. */
const NO_BRANCH = /couldn't find remote ref/i;

/**
 * Fetches the branch (`refspec`) from `from`; false when the remote has no such branch yet. The
 * fetch itself says so: no ls-remote first (a process and a round trip to the remote).
 */
async function fetchBranch(info: RepoInfo, from: string, refspec: string): Promise<boolean> {
  try {
    await networkGit(info, info.top)(["fetch", "--quiet", from, refspec]);
    return true;
  } catch (error) {
    if (NO_BRANCH.test(String(error))) return false;
    throw error;
  }
}

async function loadFrom(info: RepoInfo, target: StatusBranchTarget): Promise<BranchStatusStore> {
  const git = gitAt(info.gitEnv, info.top);
  const store: BranchStatusStore = emptyStatusStore();
  let ref = target.branch;
  if (info.hasRemote) {
    const remoteRef = `refs/plumb/status/${target.branch}`;
    const refspec = `+refs/heads/${target.branch}:${remoteRef}`;
    // By the remote's name, git reads its URL from config, credentials and all, into the argv of
    // git-remote-https: with credentials taken out of the URL (repoInfo), that URL is fetched.
    const from = info.sourceCredentials ? info.source : (target.remote ?? "origin");
    if (!(await fetchBranch(info, from, refspec))) return store;
    ref = remoteRef;
  } else if (!(await git.raw(["branch", "--list", target.branch])).trim()) {
    return store;
  }
  const repo = { git, top: info.top, env: info.gitEnv };
  const listing = await readRecords(repo, ref, info.pathOnBranch, target.branch, store);
  if (listing.includes(PRUNE_LEDGER_FILE))
    store.pruneLedger = await git.show([`${ref}:${info.pathOnBranch}/${PRUNE_LEDGER_FILE}`]);
  const real = await realTop(info.top);
  if (target.above?.length) {
    store.above = [];
    for (const dir of target.above) {
      const above = emptyStatusStore();
      await readRecords(repo, ref, pathOnBranchOf(real, dir, target.environment), target.branch, above);
      store.above.push(above);
    }
  }
  if (target.below) {
    const base = dirOnBranchOf(real, target.root);
    const below = { base, environment: target.environment, branch: target.branch };
    store.below = await readStoresBelow(info.top, info.gitEnv, git, ref, below);
  }
  return store;
}
