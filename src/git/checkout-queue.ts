// One git operation at a time in a checkout. git's own locks (index.lock, shallow.lock, the refs'
// locks) make a second command fail rather than wait, some files are shared without a lock
// (FETCH_HEAD: the status branch's fetch, run between the poll's fetch and its read of FETCH_HEAD,
// had the poll reset the checkout to the status branch), and a worktree being added can be read
// half-written by another add ("failed to read .git/worktrees/X/commondir"). So everything the
// controller runs in its checkout takes a turn here: the git source's poll (fetch and reset), the
// status branch's fetch, and the drift and promotion branches' worktrees (git/branch-worktree.ts).
// The queue belongs to the checkout's owner (the git source; a directory source has its own): one
// per checkout, no state shared by the process.

export type CheckoutQueue = {
  /**
   * Runs `work` after every earlier turn has ended (in call order); a turn that fails frees the
   * next. A turn must not wait for another turn of the same queue: it would wait for itself.
   */
  run<T>(work: () => Promise<T>): Promise<T>;
};

export function createCheckoutQueue(): CheckoutQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const mine = tail.then(work);
      tail = mine.catch(() => undefined);
      return mine;
    },
  };
}
