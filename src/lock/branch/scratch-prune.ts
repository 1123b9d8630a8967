import type { SimpleGit } from "simple-git";

// A status branch lease's scratch repository gains one loose object at every renewal (the holder's
// commit-tree) and every look (a waiter's fetch of the holder's commit), and nothing run there ever
// runs git's gc: with the default 30 s lease, 8,640 files a day (about 35 MB of a pod's /tmp, whose
// emptyDir the Kubernetes example limits to 512 MiB: an eviction after about two weeks). Every
// `every` calls (PRUNE_EVERY), the objects no ref holds that are older than `olderThanMs` are removed; a
// commit being pushed is younger than that (a renewal pushes what it made at once).

const PRUNE_EVERY = 100;

/** Call after each write or look; every `every`-th call prunes. Never fails (the lease goes on). */
export function scratchPrune(
  git: Pick<SimpleGit, "raw">,
  olderThanMs: number,
  every = PRUNE_EVERY,
): () => Promise<void> {
  let calls = 0;
  const expire = olderThanMs <= 0 ? "now" : `${Math.ceil(olderThanMs / 1000)}.seconds.ago`;
  return async () => {
    // Stryker disable next-line UpdateOperator: equivalent, -k % every is ±0 exactly when k % every is 0: the same calls prune
    if (++calls % every !== 0) return;
    await git.raw(["prune", `--expire=${expire}`]).catch(() => undefined);
  };
}
