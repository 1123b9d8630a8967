import { existsSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { SimpleGit } from "simple-git";
import type { CheckoutQueue } from "./checkout-queue.js";
import { gitAt } from "./status/status-branch.js";
import { processRunning } from "../process-running.js";

// A branch of a checkout rebuilt in a temporary worktree (controller --drift-branch, promotion.auto):
// `git worktree add --force -B BRANCH DIR HEAD`, the work, then the worktree removed. git reads
// every worktree's files under .git/worktrees/ when it adds one, and a worktree being added beside
// it can be read half-written ("fatal: failed to read .git/worktrees/X/commondir"; git 2.39: 2 of
// 40 pairs of adds at once): two environments' drift checks writing their branches at once lost
// one. So the worktree is made, used and removed in one turn of the checkout's queue
// (checkout-queue.ts), which the poll's fetch and the status branch's fetch take turns in too (a
// drift branch is a few local git commands and one push).

/**
 * A new directory for a temporary worktree of this process, `<tmp>/<prefix><pid>-XXXXXX`: the pid
 * in its name is what tells a later run that the worktree's maker is gone (removeStaleWorktrees).
 */
export const tempWorktreeDir = (prefix: string): Promise<string> =>
  mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`));

/**
 * Removes the temporary worktrees of `git`'s repository that a plumb process now gone made with
 * `prefix` (tempWorktreeDir): killed mid-run (SIGKILL, a CI job cancelled), it left its worktree
 * registered (`git worktree list`), its directory in the temporary directory, and git's prune
 * keeps a worktree whose directory is there. Only plumb's own are touched: directly in this host's
 * temporary directory, named `<prefix><pid>-XXXXXX` after a pid no process of this host has (a
 * live run's, another user's too, is left), and there (a path of another host's is not judged).
 */
export async function removeStaleWorktrees(git: SimpleGit, prefix: string): Promise<void> {
  const list = await git.raw(["worktree", "list", "--porcelain"]).catch(() => "");
  const tmp = new Set([tmpdir(), await realpath(tmpdir()).catch(() => tmpdir())]);
  const name = new RegExp(`^${prefix}(\\d+)-[A-Za-z0-9]{6}$`); // prefixes: plain words and dashes
  for (const line of list.split("\n")) {
    const path = line.startsWith("worktree ") ? line.slice("worktree ".length) : "";
    const pid = Number(name.exec(basename(path))?.[1] ?? 0);
    if (!pid || !tmp.has(dirname(path)) || !existsSync(path) || processRunning(pid)) continue;
    await git.raw(["worktree", "remove", "--force", path]).catch(() => undefined);
    await rm(path, { recursive: true, force: true });
  }
}

/**
 * Resets `branch` to the checkout's HEAD in a new temporary worktree and runs `work` in it (the
 * worktree's directory); the worktree is removed afterwards, whatever `work` did.
 */
export function onBranchWorktree<T>(
  options: {
    repoRoot: string;
    gitEnv: Record<string, string> | undefined;
    /** The checkout's queue (its git source's): the worktree's whole life is one turn. */
    queue: CheckoutQueue;
    branch: string;
    prefix: string;
  },
  work: (worktree: string) => Promise<T>,
): Promise<T> {
  const repo = gitAt(options.gitEnv, options.repoRoot);
  return options.queue.run(async () => {
    await removeStaleWorktrees(repo, options.prefix);
    const worktree = await tempWorktreeDir(options.prefix);
    try {
      await repo.raw(["worktree", "add", "--force", "-B", options.branch, worktree, "HEAD"]);
      return await work(worktree);
    } finally {
      await repo.raw(["worktree", "remove", "--force", worktree]).catch(() => undefined);
      await rm(worktree, { recursive: true, force: true });
    }
  });
}
