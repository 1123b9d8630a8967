import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CheckoutQueue } from "./checkout-queue.js";
import { gitAt } from "./status-branch.js";

// A branch of a checkout rebuilt in a temporary worktree (controller --drift-branch, promotion.auto):
// `git worktree add --force -B BRANCH DIR HEAD`, the work, then the worktree removed. git reads
// every worktree's files under .git/worktrees/ when it adds one, and a worktree being added beside
// it can be read half-written ("fatal: failed to read .git/worktrees/X/commondir"; git 2.39: 2 of
// 40 pairs of adds at once): two environments' drift checks writing their branches at once lost
// one. So the worktree is made, used and removed in one turn of the checkout's queue
// (checkout-queue.ts), which the poll's fetch and the status branch's fetch take turns in too (a
// drift branch is a few local git commands and one push).

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
    const worktree = await mkdtemp(join(tmpdir(), options.prefix));
    try {
      await repo.raw(["worktree", "add", "--force", "-B", options.branch, worktree, "HEAD"]);
      return await work(worktree);
    } finally {
      await repo.raw(["worktree", "remove", "--force", worktree]).catch(() => undefined);
      await rm(worktree, { recursive: true, force: true });
    }
  });
}
