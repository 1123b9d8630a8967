import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gitAt } from "./status-branch.js";

// A branch of a checkout rebuilt in a temporary worktree (controller --drift-branch, promotion.auto):
// `git worktree add --force -B BRANCH DIR HEAD`, the work, then the worktree removed. git reads
// every worktree's files under .git/worktrees/ when it adds one, and a worktree being added beside
// it can be read half-written ("fatal: failed to read .git/worktrees/X/commondir"; git 2.39: 2 of
// 40 pairs of adds at once, about one in two rounds of six): two environments' drift checks writing
// their branches at once lost one. So this process makes, uses and removes the worktrees of one
// repository one at a time (a drift branch is a few local git commands and one push).

const turns = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier call on the same repository has ended (in call order). */
async function inTurn<T>(repoRoot: string, work: () => Promise<T>): Promise<T> {
  const key = resolve(repoRoot);
  const before = turns.get(key) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(work);
  const settled = mine.catch(() => undefined);
  turns.set(key, settled);
  try {
    return await mine;
  } finally {
    if (turns.get(key) === settled) turns.delete(key);
  }
}

/**
 * Resets `branch` to the checkout's HEAD in a new temporary worktree and runs `work` in it (the
 * worktree's directory); the worktree is removed afterwards, whatever `work` did.
 */
export function onBranchWorktree<T>(
  options: { repoRoot: string; gitEnv: Record<string, string> | undefined; branch: string; prefix: string },
  work: (worktree: string) => Promise<T>,
): Promise<T> {
  const repo = gitAt(options.gitEnv, options.repoRoot);
  return inTurn(options.repoRoot, async () => {
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
