import { realpath, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { PlumbError } from "../errors.js";
import { removeStaleWorktrees, tempWorktreeDir } from "../git/branch-worktree.js";
import { gitAt } from "../git/status/status-branch.js";
import type { FileChange } from "./file-changes.js";

// promote --branch NAME: the promotion committed on a new branch NAME of the repository holding
// PATH, made from HEAD in a temporary worktree, so the working tree, its checked-out branch and
// its index are not touched; the branch is left for review (push it, open a pull request). Every
// file the promotion was judged from must be as HEAD has them, not only the edited ones: the
// manifests under PATH (YAML, tracked or not) and the two Environment documents. A gate loosened
// in the working copy only (soak: 2h taken out of prod.yaml) gave a branch whose promotion HEAD's
// own gates block, with nothing in the branch or its evidence to say so.

const WORKTREE_PREFIX = "plumb-promote-";

const failed = (message: string, cause?: unknown) =>
  new PlumbError("promotion-branch-failed", message, cause === undefined ? {} : { cause });

/**
 * Commits `changes` (paths relative to `root`) on the new branch; returns the commit id. `read`:
 * more files (relative to `root`) the promotion was judged from, beside the YAML under `root`.
 */
export async function commitOnNewBranch(
  root: string,
  branch: string,
  changes: readonly FileChange[],
  message: string,
  read: readonly string[] = [],
): Promise<string> {
  const top = await gitAt(undefined, root)
    .revparse(["--show-toplevel"])
    .then(
      (t) => t.trim(),
      () => {
        throw failed(`${root} is not inside a git repository; use --write, or run git init and commit first`);
      },
    );
  // Every path below is relative to the repository's top (PATH may be a folder of it).
  const git = gitAt(undefined, top);
  // --branch expands @{-1} (the branch checked out before) to another name: only a name that is
  // itself is taken, as git branch would.
  const checked = await git.raw(["check-ref-format", "--branch", branch]).catch(() => null);
  if (checked?.trim() !== branch) throw failed(`--branch ${branch}: not a valid branch name`);
  const exists = await git.raw(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]).then(
    (out) => out.trim() !== "",
    () => false,
  );
  if (exists)
    throw failed(
      `branch ${branch} already exists; name a new branch (or delete it: git branch -D ${branch})`,
    );
  const realRoot = await realpath(root);
  const paths = changes.map((c) => relative(top, resolve(realRoot, c.file)));
  const tree = relative(top, realRoot);
  const under = (glob: string) => `:(glob)${tree ? `${tree}/` : ""}**/${glob}`;
  const judged = [
    ...paths,
    ...read.map((f) => relative(top, resolve(realRoot, f))),
    under("*.yaml"),
    under("*.yml"),
  ];
  const dirty = (await git.raw(["status", "--porcelain", "--untracked-files=all", "--", ...judged])).trim();
  if (dirty)
    throw failed(
      `--branch commits on top of HEAD, and these files the promotion was judged from differ from it:\n${dirty}\ncommit or discard those changes first (or use --write)`,
    );
  const identity = (await git.raw(["config", "user.email"]).catch(() => "")).trim()
    ? []
    : ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];
  // A promote killed mid-run left its worktree registered: gone now, if its process is (only plumb's).
  await removeStaleWorktrees(git, WORKTREE_PREFIX);
  const worktree = await tempWorktreeDir(WORKTREE_PREFIX);
  try {
    // The commit is made on a detached HEAD; the branch is created only once it exists, in one
    // ref update that fails if the name is taken meanwhile. A promote killed before (SIGKILL in
    // the commit, a pre-commit hook that never returns) leaves no branch pointing at HEAD, which
    // read as a promotion with nothing in it and made the retry fail as "already exists"; a
    // failure never deletes a branch, which could be another promote's of the same name.
    await git.raw(["worktree", "add", "--quiet", "--detach", worktree, "HEAD"]);
    for (const [i, change] of changes.entries()) await writeFile(join(worktree, paths[i]!), change.after);
    const work = gitAt(undefined, worktree);
    await work.raw(["add", "--", ...paths]);
    await work.raw([...identity, "commit", "--quiet", "-m", message, "--", ...paths]);
    const commit = (await work.revparse(["HEAD"])).trim();
    await git.raw(["update-ref", "-m", "plumb promote", `refs/heads/${branch}`, commit, ""]).catch(() => {
      throw failed(`branch ${branch} was made by someone else meanwhile; name a new branch`);
    });
    return commit;
  } catch (error) {
    if (error instanceof PlumbError) throw error;
    throw failed(
      `could not commit on branch ${branch}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  } finally {
    await git.raw(["worktree", "remove", "--force", worktree]).catch(() => undefined);
    await rm(worktree, { recursive: true, force: true });
  }
}
