import { join, relative, resolve } from "node:path";
import { isOutside } from "../../path-inside.js";
import type { SimpleGit } from "simple-git";
import { simpleGit } from "../simple-git.js";
import { PlumbError, type PlumbErrorCode } from "../../errors.js";
import { statusGitEnv } from "../git-env.js";
import { gitSecretsOf, hideCredentials } from "../git-credentials.js";
import { redactUrlsIn, splitRemote, type UrlCredentials } from "../git-origin.js";
import type { CheckoutQueue } from "../checkout-queue.js";
import { DEFAULT_STATUS_DIR } from "../../status/status-store.js";
import { type GitStop, GitStopped, runNetworkGit } from "../stoppable-git.js";

// `--status-branch BRANCH`: the status records are committed to a branch of the manifest repository
// and pushed, so a pull-request check in a fresh clone can read them. The work happens in a
// temporary clone: the user's worktree, index and current branch are never touched. Here: the
// target, its repository and how git runs there; the publish and the read are in records/
// (publish-status-branch.ts, load-status-branch.ts).

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
export const inTurn = <T>(target: StatusBranchTarget, work: () => Promise<T>): Promise<T> =>
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
  /** The remote's URL as git is given it: without the user name and password it may carry. */
  source: string;
  /** Those, given to git by an askpass for the remote's origin (git-env.ts), never in argv. */
  sourceCredentials?: UrlCredentials | undefined;
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

export async function repoInfo(target: StatusBranchTarget): Promise<RepoInfo> {
  const git = gitAt(target.gitEnv, target.root);
  const { top, current } = await topAndCurrent(git);
  if (!top) {
    throw new PlumbError(
      "status-branch-no-repo",
      `--status-branch needs the manifests in a git repository; ${target.root} is not in one`,
    );
  }
  const remoteName = target.remote ?? "origin";
  const remotes = await git.getRemotes(true);
  const remote = remotes.find((r) => r.name === remoteName);
  const real = await realTop(top);
  const source = splitRemote(remote?.refs.push || remote?.refs.fetch || top);
  return {
    top,
    current,
    source: source.url,
    sourceCredentials: source.credentials,
    hasRemote: remote !== undefined,
    pathOnBranch: pathOnBranchOf(real, target.root, target.environment),
    gitEnv: target.gitEnv,
    gitStop: target.gitStop,
  };
}

/**
 * The work tree's top and its current branch, in one git process. --show-toplevel fails outside a
 * repository, in a bare one and inside .git, as --is-inside-work-tree says no there (top ""). A
 * repository without a commit has no HEAD to name: its top alone is asked then (current "").
 */
async function topAndCurrent(git: SimpleGit): Promise<{ top: string; current: string }> {
  const both = await git.raw(["rev-parse", "--show-toplevel", "--abbrev-ref", "HEAD"]).catch(() => null);
  if (both === null)
    return { top: (await git.revparse(["--show-toplevel"]).catch(() => "")).trim(), current: "" };
  // The branch is the last line: a top whose path holds a line break keeps it.
  const lines = both.replace(/\n$/, "").split("\n");
  const current = lines.pop() ?? "";
  return { top: lines.join("\n"), current };
}

/** The manifest directory `dir` on the branch: its path in the repository ("" at the root or outside). */
export function dirOnBranchOf(realTop: string, dir: string): string {
  const rel = relative(realTop, resolve(dir));
  return (isOutside(realTop, resolve(dir)) ? "" : rel).split("\\").join("/");
}

/** Where the store of the manifest directory `dir` lives on the branch: `REL/.plumb/status/(ENV/)`. */
export function pathOnBranchOf(realTop: string, dir: string, environment: string | undefined): string {
  return join(dirOnBranchOf(realTop, dir), DEFAULT_STATUS_DIR, environment ?? "")
    .split("\\")
    .join("/");
}

// git prints the real path; resolve symlinks (e.g. /tmp on macOS) the same way for `relative`.
export async function realTop(top: string): Promise<string> {
  const { realpath } = await import("node:fs/promises");
  return realpath(top).catch(() => top);
}

/**
 * Runs `work` with the repository's credentials handed to git (git-env.ts); any git failure is
 * `code` with git's first line, stripped of anything that looks like a credential, and the fix.
 */
export async function withStatusGitEnv<T>(
  info: RepoInfo,
  code: PlumbErrorCode,
  what: string,
  work: (withCredentials: RepoInfo) => Promise<T>,
): Promise<T> {
  const git = await statusGitEnv(info, info.gitEnv);
  try {
    return await work({ ...info, gitEnv: git.env });
  } catch (error) {
    throw gitFailure(error, code, what, git.env);
  } finally {
    await git.dispose();
  }
}

/**
 * A git failure as a typed error: git's reason without credentials, and the fix (typed errors pass).
 * `env`: the git environment the command ran with (its token and extraheader are hidden).
 */
export const gitFailure = (
  error: unknown,
  code: PlumbErrorCode,
  what: string,
  env: Record<string, string | undefined> = process.env,
): PlumbError =>
  error instanceof PlumbError
    ? error
    : error instanceof GitStopped // the controller's stop, not the credentials
      ? new PlumbError(code, `${what}: ${error.message}`, { cause: error })
      : new PlumbError(code, `${what}: ${gitReason(error, env)}; ${CREDENTIALS_FIX}`, { cause: error });

const CREDENTIALS_FIX =
  "the status branch is pushed with the repository's own credentials (its http.extraheader, credential helpers, GIT_ASKPASS) or PLUMB_GIT_USERNAME/PLUMB_GIT_TOKEN: give them write access (GitHub Actions: permissions: contents: write)";

/**
 * git's first error line without a credential: every URL in it redacted as the remote is shown
 * (git quotes it with its query: `repository 'https://host/r.git?access_token=…/' not found`), an
 * Authorization header value, and PLUMB_GIT_TOKEN in the forms a server echoes it in (`fatal:
 * remote error: …` quoting the Basic credentials it was sent): git-origin.ts, git-credentials.ts.
 */
const gitReason = (error: unknown, env: Record<string, string | undefined>): string =>
  redactUrlsIn(
    hideCredentials(
      ((error as Error).message ?? String(error)).split("\n").find((l) => l.trim()) ?? "git failed",
      gitSecretsOf(env),
    ),
  )
    .replace(/(authorization:\s*\w+\s+)\S+/gi, "$1[redacted]")
    .trim();
