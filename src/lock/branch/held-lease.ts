import { PlumbError } from "../../errors.js";
import type { PushFence } from "../../git/fenced-push.js";
import { createFence, type Fence, watchDeadline } from "../fence.js";
import { systemMonotonic } from "../lock-types.js";
import type { Lease } from "./lease-record.js";
import { leaseRef, type Remote } from "./remote.js";
import { assertHeld, type LeaseOptions, lose, renew, type Renewal } from "./renewal.js";

// What the holder of a status branch lease uses: its renewals started, the status pushes that renew
// it in the same atomic push (withLease), and its release.

export type BranchLease = {
  release(): Promise<void>;
  lost: AbortSignal;
  /** Throws lock-lost unless the lease is still good on this process's monotonic clock. */
  assertHeld(): void;
  /** A status push that renews the lease in the same atomic push (status/fenced-push.ts). */
  withLease: NonNullable<PushFence["withLease"]>;
  /** The scratch repository the lease is written from (kept small: scratch-prune.ts). */
  scratch: string;
};

export function startRenewing(
  remote: Remote,
  branch: string,
  first: string,
  next: () => Lease,
  options: LeaseOptions & { startedAt: number },
  prune: () => Promise<void>,
): BranchLease {
  const monotonic = options.monotonic ?? systemMonotonic;
  const lost = new AbortController();
  const lose = (error: PlumbError) => lost.abort(error); // (once aborted, abort() keeps the first reason)
  const fence: Fence = createFence({
    leaseMs: options.leaseMs,
    monotonic,
    since: options.startedAt,
    what: `the lease of status branch ${branch}`,
    onLapse: lose,
  });
  const r: Renewal = {
    remote,
    branch,
    next,
    options,
    monotonic,
    lost,
    fence,
    current: first,
    renewing: Promise.resolve(),
    inFlight: null,
    timer: undefined,
    released: false,
    prune,
  };
  // A renewMs past the renew deadline loses the lease between renewals (tests: a holder that is gone).
  r.timer = setInterval(() => {
    r.renewing = r.renewing.then(() => renew(r)).catch(() => undefined);
  }, options.renewMs);
  r.timer.unref();
  // At the deadline, as a write: a renewal hanging on the remote is not joined by a push on the spot.
  const stopWatch = watchDeadline(fence, {
    leaseMs: options.leaseMs,
    monotonic,
    lost: lost.signal,
    due: () => (r.inFlight === null ? assertHeld(r) : fence.check()),
  });
  return {
    lost: lost.signal,
    assertHeld: () => assertHeld(r),
    withLease: (push) => withLease(r, push),
    release: () => {
      stopWatch();
      return release(r);
    },
    scratch: remote.scratch,
  };
}

// A push carrying the next lease, in turn with the renewals: the lease moves only if it lands.
function withLease(
  r: Renewal,
  push: Parameters<BranchLease["withLease"]>[0],
): ReturnType<BranchLease["withLease"]> {
  const run = r.renewing.then(async () => {
    assertHeld(r);
    const started = r.monotonic();
    const next_ = await push({
      ref: leaseRef(r.branch),
      expected: r.current,
      message: JSON.stringify(r.next()),
      tree: r.remote.tree,
    });
    if (next_) {
      r.current = next_;
      r.fence.renewed(started);
      return;
    }
    lose(
      r,
      new PlumbError("lock-lost", `lost the lease of status branch ${r.branch}: another writer took it`),
    );
    throw r.lost.signal.reason;
  });
  r.renewing = run.catch(() => undefined);
  return run;
}

async function release(r: Renewal): Promise<void> {
  // Stryker disable next-line ConditionalExpression: equivalent, a second release's CAS finds no lease of its own
  if (r.released) return;
  // Stryker disable next-line BooleanLiteral: equivalent, as above
  r.released = true;
  clearInterval(r.timer);
  await r.renewing;
  const ref = leaseRef(r.branch);
  await r.remote
    .net(["push", "--quiet", `--force-with-lease=${ref}:${r.current}`, r.remote.source, `:${ref}`])
    .catch(() => undefined);
  await r.remote.close();
}
