import type { Clock } from "../../clock.js";
import { PlumbError } from "../../errors.js";
import { type Fence, lapsedError, renewDeadlineOf } from "../fence.js";
import type { Monotonic } from "../lock-types.js";
import { type Lease, writeLease } from "./lease-record.js";
import { IDENTITY, leaseRef, type Remote } from "./remote.js";

// A held lease's renewals: a new lease commit every third of the lease (renew, on a timer), and one
// on the spot at a write past the renew deadline (renewNow); assertHeld is asked before every write.

export type LeaseOptions = {
  leaseMs: number;
  renewMs: number;
  timeoutMs: number;
  retryMs: number;
  clock?: Clock;
  monotonic?: Monotonic;
  signal?: AbortSignal;
  /** Unreferenced objects of the scratch repository older than this are pruned (default: 2 leases, at least 10 min)… */
  pruneAfterMs?: number;
  /** …every this many renewals or looks (default 100). */
  pruneEvery?: number;
};

/** What a held lease's renewals, writes and release share. */
export type Renewal = {
  remote: Remote;
  branch: string;
  next: () => Lease;
  options: LeaseOptions & { startedAt: number };
  monotonic: Monotonic;
  lost: AbortController;
  fence: Fence;
  current: string;
  renewing: Promise<void>;
  /** The async renewal's push. */
  inFlight: { commit: string; started: number } | null;
  timer: ReturnType<typeof setInterval> | undefined;
  released: boolean;
  /** After each renewal that landed (scratch-prune.ts). */
  prune: () => Promise<void>;
};

export function lose(r: Renewal, error: PlumbError): void {
  r.lost.abort(error); // (once aborted, abort() keeps the first reason)
}

export async function renew(r: Renewal): Promise<void> {
  if (r.lost.signal.aborted) return;
  // Even late: a compare-and-swap that lands proves no one took it meanwhile (fence.ts).
  const from = r.current;
  const started = r.monotonic();
  let landed: string | null = null;
  try {
    landed = await writeLease(r.remote, r.branch, r.next(), from, (commit) => {
      r.inFlight = { commit, started };
    });
    if (landed) {
      // (A renewal on the spot meanwhile found this one landed: current is `landed` already.)
      r.current = landed;
      r.fence.renewed(started);
    } else if (r.current === from)
      // (current moved: a renewal on the spot, below, swapped it first)
      lose(
        r,
        new PlumbError("lock-lost", `lost the lease of status branch ${r.branch}: another writer took it`),
      );
  } catch {
    // The remote did not answer: try again at the next tick; past the renew deadline it is lost.
    if (!r.fence.valid())
      lose(r, lapsedError(`the lease of status branch ${r.branch}`, renewDeadlineOf(r.options.leaseMs)));
  } finally {
    r.inFlight = null;
  }
  if (landed) await r.prune();
}

// Past the renew deadline at a write while the lease itself has not run out on this process's
// monotonic clock (its event loop was blocked, no renewal ran): one compare-and-swap push on the
// spot, synchronous so that nothing is sent before it answers. It landing proves the lease is
// still this holder's; failing (someone else moved the ref) leaves the deadline passed, and the
// write is refused as before. A renewal in flight that landed first counts as this one.
function renewNow(r: Renewal): void {
  const from = r.current;
  const left = r.options.leaseMs - r.fence.sinceRenewal();
  // Stryker disable next-line EqualityOperator: equivalent, with 0 ms left its git call times out at once (1 ms)
  if (left <= 0) return;
  const started = r.monotonic();
  const ref = leaseRef(r.branch);
  try {
    const message = JSON.stringify(r.next());
    const commit = r.remote.gitSync([...IDENTITY, "commit-tree", r.remote.tree, "-m", message], left);
    r.remote.gitSync(
      ["push", "--quiet", `--force-with-lease=${ref}:${from}`, r.remote.source, `${commit}:${ref}`],
      r.options.leaseMs - r.fence.sinceRenewal(),
    );
    r.current = commit;
    r.fence.renewed(started);
  } catch {
    const pending: { commit: string; started: number } | null = r.inFlight;
    if (!pending) return;
    try {
      const now = r.remote.gitSync(
        ["ls-remote", r.remote.source, ref],
        r.options.leaseMs - r.fence.sinceRenewal(),
      );
      if (now.split(/\s+/)[0] === pending.commit) {
        r.current = pending.commit;
        r.fence.renewed(pending.started);
      }
    } catch {
      // No answer: the deadline stays passed.
    }
  }
}

export function assertHeld(r: Renewal): void {
  if (r.lost.signal.aborted) throw r.lost.signal.reason;
  if (!r.fence.valid()) renewNow(r);
  r.fence.check();
}
