import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { isOutside } from "../path-inside.js";
import type { SimpleGit } from "simple-git";
import { simpleGit } from "./simple-git.js";
import { PlumbError, type PlumbErrorCode } from "../errors.js";
import { statusGitEnv } from "./git-env.js";
import { fencedPush, type PushFence } from "./fenced-push.js";
import type { CheckoutQueue } from "./checkout-queue.js";
import { DEFAULT_STATUS_DIR } from "../status/status-store.js";
import { type StatusStore, emptyStatusStore } from "../status/status-types.js";
import { readRecords, readStoresBelow } from "./records/status-branch-records.js";
import { PRUNE_LEDGER_FILE } from "../status/prune-ledger.js";
import { trackedRecords } from "./records/tracked-records.js";
import { type GitStop, GitStopped, runNetworkGit } from "./stoppable-git.js";

// `--status-branch BRANCH`: the status records are committed to a branch of the manifest repository
// and pushed, so a pull-request check in a fresh clone can read them. The work happens in a
// temporary clone: the user's worktree, index and current branch are never touched.

export type StatusBranchTarget = {
  /** Manifest root (any directory inside the manifest repository). */
  root: string;
  branch: string;
  /** Remote to push to and fetch from; "origin" by default. Without it the local branch is used. */
  remote?: string;
  /**
   * Environment of the git commands (e.g. the controller's GIT_ASKPASS credentials for an HTTPS
   * remote); without it they inherit this process's environment.
   */
  gitEnv?: Record<string, string> | undefined;
  /** The controller's stop: its git commands over the network end with it (stoppable-git.ts). */
  gitStop?: GitStop | undefined;
  /** With environments: the environment's records are under `.plumb/status/ENV/` on the branch. */
  environment?: string | undefined;
  /**
   * The checkout's git queue (checkout-queue.ts; the controller's source): what runs git in the
   * repository itself takes a turn, the fetch of the branch and a push into a repository without
   * a remote. Without it (the commands) git runs at once.
   */
  queue?: CheckoutQueue | undefined;
  /**
   * Directories above root whose stores are read too, on the same fetch (read only: the stores
   * above a PATH, status-nearby.ts): their `.plumb/status/` (ENV/) on the branch.
   */
  above?: readonly string[] | undefined;
  /**
   * Whether the stores below root are read too, on the same fetch (read only: the stores below a
   * directory PATH, status-nearby.ts): every `.plumb/status/` (ENV/) on the branch under root.
   */
  below?: boolean | undefined;
};

/** `work` in a turn of the target's queue, or at once without one. */
const inTurn = <T>(target: StatusBranchTarget, work: () => Promise<T>): Promise<T> =>
  target.queue ? target.queue.run(work) : work();

/** simple-git in `baseDir`, with `env` (its GIT_* keys explicitly allowed) when given. */
export function gitAt(env: Record<string, string> | undefined, baseDir?: string): SimpleGit {
  if (!env) return baseDir ? simpleGit(baseDir) : simpleGit();
  return simpleGit({
    ...(baseDir ? { baseDir } : {}),
    // The repository's own credential settings are handed down (git-env.ts): helpers included.
    unsafe: { allowUnsafeAskPass: true, allowUnsafeCredentialHelper: true, allowUnsafeConfigEnvCount: true },
    allowEnvironment: Object.keys(env).filter((k) => k.toUpperCase().startsWith("GIT_")),
  }).env(env);
}

export type RepoInfo = {
  top: string;
  current: string;
  source: string;
  hasRemote: boolean;
  pathOnBranch: string;
  gitEnv: Record<string, string> | undefined;
  gitStop?: GitStop | undefined;
};

/**
 * `git ARGS` over the network (ls-remote, clone, fetch, push) in `cwd`, in a process group of its
 * own that the controller's stop ends (stoppable-git.ts); simple-git ended git alone, and its HTTP
 * helper, waiting on a remote that said nothing, kept the controller up to a minute past SIGTERM.
 */
export const networkGit =
  (info: Pick<RepoInfo, "gitEnv" | "gitStop">, cwd: string) => (args: readonly string[]) =>
    runNetworkGit(args, {
      cwd,
      env: info.gitEnv ?? (process.env as Record<string, string>),
      stop: info.gitStop,
    });

const GIT_IDENTITY = ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];

export async function repoInfo(target: StatusBranchTarget): Promise<RepoInfo> {
  const git = gitAt(target.gitEnv, target.root);
  if (!(await git.checkIsRepo().catch(() => false))) {
    throw new PlumbError(
      "status-branch-no-repo",
      `--status-branch needs the manifests in a git repository; ${target.root} is not in one`,
    );
  }
  const top = (await git.revparse(["--show-toplevel"])).trim();
  const current = (await git.raw(["rev-parse", "--abbrev-ref", "HEAD"]).catch(() => "")).trim();
  const remoteName = target.remote ?? "origin";
  const remotes = await git.getRemotes(true);
  const remote = remotes.find((r) => r.name === remoteName);
  const real = await realTop(top);
  return {
    top,
    current,
    source: remote?.refs.push || remote?.refs.fetch || top,
    hasRemote: remote !== undefined,
    pathOnBranch: pathOnBranchOf(real, target.root, target.environment),
    gitEnv: target.gitEnv,
    gitStop: target.gitStop,
  };
}

/** The manifest directory `dir` on the branch: its path in the repository ("" at the root or outside). */
function dirOnBranchOf(realTop: string, dir: string): string {
  const rel = relative(realTop, resolve(dir));
  return (isOutside(realTop, resolve(dir)) ? "" : rel).split("\\").join("/");
}

/** Where the store of the manifest directory `dir` lives on the branch: `REL/.plumb/status/(ENV/)`. */
function pathOnBranchOf(realTop: string, dir: string, environment: string | undefined): string {
  return join(dirOnBranchOf(realTop, dir), DEFAULT_STATUS_DIR, environment ?? "")
    .split("\\")
    .join("/");
}

// git prints the real path; resolve symlinks (e.g. /tmp on macOS) the same way for `relative`.
async function realTop(top: string): Promise<string> {
  const { realpath } = await import("node:fs/promises");
  return realpath(top).catch(() => top);
}

function assertNotManifestBranch(info: RepoInfo, branch: string): void {
  if (branch === info.current) {
    throw new PlumbError(
      "status-branch-is-manifest-branch",
      `--status-branch ${branch} is the branch the manifests come from; choose another (e.g. plumb-status)`,
    );
  }
}

async function branchExists(info: RepoInfo, branch: string): Promise<boolean> {
  const out = await networkGit(info, info.top)(["ls-remote", "--heads", info.source, branch]);
  return out.trim().length > 0;
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

/**
 * Runs `work` with the repository's credentials handed to git (git-env.ts); any git failure is
 * `code` with git's first line, stripped of anything that looks like a credential, and the fix.
 */
async function withStatusGitEnv<T>(
  info: RepoInfo,
  code: PlumbErrorCode,
  what: string,
  work: (withCredentials: RepoInfo) => Promise<T>,
): Promise<T> {
  const git = await statusGitEnv(info, info.gitEnv);
  try {
    return await work({ ...info, gitEnv: git.env });
  } catch (error) {
    throw gitFailure(error, code, what);
  } finally {
    await git.dispose();
  }
}

/** A git failure as a typed error: git's reason without credentials, and the fix (typed errors pass). */
export const gitFailure = (error: unknown, code: PlumbErrorCode, what: string): PlumbError =>
  error instanceof PlumbError
    ? error
    : error instanceof GitStopped // the controller's stop, not the credentials
      ? new PlumbError(code, `${what}: ${error.message}`, { cause: error })
      : new PlumbError(code, `${what}: ${gitReason(error)}; ${CREDENTIALS_FIX}`, { cause: error });

const CREDENTIALS_FIX =
  "the status branch is pushed with the repository's own credentials (its http.extraheader, credential helpers, GIT_ASKPASS) or PLUMB_GIT_USERNAME/PLUMB_GIT_TOKEN: give them write access (GitHub Actions: permissions: contents: write)";

/** git's first error line without a URL's user:password or an Authorization header value. */
const gitReason = (error: unknown): string =>
  (((error as Error).message ?? String(error)).split("\n").find((l) => l.trim()) ?? "git failed")
    .replace(/\/\/[^/@\s]+@/g, "//")
    .replace(/(authorization:\s*\w+\s+)\S+/gi, "$1[redacted]")
    .trim();

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

async function commitInClone(
  info: RepoInfo,
  branch: string,
  { statusDir, own }: PublishedStore,
  message: string,
  work: string,
): Promise<{ commit: string | null }> {
  if (await branchExists(info, branch)) {
    const clone = ["clone", "--depth", "1", "--single-branch", "--branch", branch, "--"];
    await networkGit(info, info.top)([...clone, info.source, work]);
  } else {
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
 * under root (records/status-branch-records.ts).
 */
export type BranchStatusStore = StatusStore & {
  pruneLedger?: string;
  above?: StatusStore[];
  below?: StatusStore[];
};

async function loadFrom(info: RepoInfo, target: StatusBranchTarget): Promise<BranchStatusStore> {
  const git = gitAt(info.gitEnv, info.top);
  const store: BranchStatusStore = emptyStatusStore();
  let ref = target.branch;
  if (info.hasRemote) {
    if (!(await branchExists(info, target.branch))) return store;
    const remoteRef = `refs/plumb/status/${target.branch}`;
    const refspec = `+refs/heads/${target.branch}:${remoteRef}`;
    await networkGit(info, info.top)(["fetch", "--quiet", target.remote ?? "origin", refspec]);
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
