import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { PlumbError } from "../errors.js";
import { gitAt } from "../git/status-branch.js";
import type { FileChange } from "./file-changes.js";

// promote --branch NAME: the promotion committed on a new branch NAME of the repository holding
// PATH, made from HEAD in a temporary worktree, so the working tree, its checked-out branch and
// its index are not touched; the branch is left for review (push it, open a pull request). The
// edited files must be as HEAD has them (the change was computed from the working copy).

const failed = (message: string, cause?: unknown) =>
  new PlumbError("promotion-branch-failed", message, cause === undefined ? {} : { cause });

/** Commits `changes` (paths relative to `root`) on the new branch; returns the commit id. */
export async function commitOnNewBranch(
  root: string,
  branch: string,
  changes: readonly FileChange[],
  message: string,
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
  await git.raw(["check-ref-format", "--branch", branch]).catch(() => {
    throw failed(`--branch ${branch}: not a valid branch name`);
  });
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
  const dirty = (await git.raw(["status", "--porcelain", "--", ...paths])).trim();
  if (dirty)
    throw failed(
      `--branch commits on top of HEAD, and these files differ from it:\n${dirty}\ncommit or discard those changes first (or use --write)`,
    );
  const identity = (await git.raw(["config", "user.email"]).catch(() => "")).trim()
    ? []
    : ["-c", "user.name=plumb", "-c", "user.email=plumb@localhost"];
  const worktree = await mkdtemp(join(tmpdir(), "plumb-promote-"));
  let committed = false;
  try {
    await git.raw(["worktree", "add", "--quiet", "-b", branch, worktree, "HEAD"]);
    for (const [i, change] of changes.entries()) await writeFile(join(worktree, paths[i]!), change.after);
    const tree = gitAt(undefined, worktree);
    await tree.raw(["add", "--", ...paths]);
    await tree.raw([...identity, "commit", "--quiet", "-m", message, "--", ...paths]);
    const commit = (await tree.revparse(["HEAD"])).trim();
    committed = true;
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
    // A branch made for a commit that failed is not left behind (a retry would find it taken).
    if (!committed) await git.raw(["branch", "-D", branch]).catch(() => undefined);
  }
}
