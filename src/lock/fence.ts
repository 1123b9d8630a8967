import { PlumbError } from "../errors.js";
import type { GitStop } from "../git/stoppable-git.js";
import type { Monotonic } from "./lock-types.js";

// The holder's own view of its lease, on its own monotonic clock (never a wall clock, never another
// host's): the lease is good until the renew deadline after the start of its last successful renewal.
// A waiter takes over only after seeing the same renewal for a whole lease (observer.ts), and the
// deadline is shorter than the lease (as Kubernetes leader election's renewDeadline < leaseDuration),
// so a holder that cannot renew (paused by SIGSTOP, a stalled disk or remote, a long GC) stops writing
// before anyone else may start: every write first asks check() (src/api/transport/http.ts beforeWrite).

export type Fence = {
  /** A renewal that started at `startedAt` (monotonic ms) succeeded. */
  renewed(startedAt: number): void;
  /** Whether the lease is still good on this process's monotonic clock. */
  valid(): boolean;
  /** Monotonic ms since the start of the last successful renewal (or the acquisition). */
  sinceRenewal(): number;
  /** Throws lock-lost (and calls onLapse once) when it is not. */
  check(): void;
};

/** The renew deadline: two thirds of the lease, so one renewal may fail without losing it. */
export const renewDeadlineOf = (leaseMs: number): number => Math.floor((leaseMs * 2) / 3);

export function createFence(options: {
  leaseMs: number;
  monotonic: Monotonic;
  /** Started at this monotonic time (the acquisition). */
  since: number;
  what: string;
  onLapse: (error: PlumbError) => void;
}): Fence {
  const deadline = renewDeadlineOf(options.leaseMs);
  let last = options.since;
  const valid = () => options.monotonic() - last < deadline;
  return {
    renewed(startedAt) {
      last = Math.max(last, startedAt);
    },
    valid,
    sinceRenewal: () => options.monotonic() - last,
    check() {
      if (valid()) return;
      const error = lapsedError(options.what, deadline);
      options.onLapse(error);
      throw error;
    },
  };
}

/** The lock-lost errors of a lapse (no renewal in time), told apart from a lock someone else took. */
const lapses = new WeakSet<Error>();

export const lapsedError = (what: string, deadlineMs: number): PlumbError => {
  const error = new PlumbError(
    "lock-lost",
    `lost ${what}: not renewed within ${deadlineMs} ms (this process was paused or its renewals failed), so another writer may hold it now; nothing more is sent or recorded: restart to stand by or run again`,
  );
  lapses.add(error);
  return error;
};

/** Whether `error` is a lapse (lapsedError): the holder did not renew in time; no one was seen taking it. */
const isLapse = (error: unknown): boolean => error instanceof Error && lapses.has(error);

/**
 * Whether the state lock was lost (`reason`) only because the git remote stopped answering once the
 * controller was told to stop: its lease lapsed (no renewal landed in time, stoppable-git.ts's bound
 * after the stop), no one was seen taking it. Not a lock lost while leading: it stopped as asked
 * (the controller's log, its notifications and its last publish say so: docs/controller.md).
 */
export const lapsedWhileStopping = (reason: unknown, gitStop: GitStop | undefined): boolean =>
  gitStop !== undefined && gitStop.signal.aborted && gitStop.unanswered && isLapse(reason);

/**
 * Acts shortly before the lease runs out with no renewal landed (`slack` before, a tenth of the
 * lease, at most 1 s) as a write would then: `due` throws, and aborts `lost`, unless a renewal on
 * the spot proves the lock still its own. The requests in flight listen on `lost`: they are
 * abandoned before a waiter may take over, not at their own timeout (30 s) or when a renewal that
 * hangs gives up (a stalled remote: a minute). Not at the renew deadline: a slow renewal (a loaded
 * machine) may still land between the two, and writes are fenced meanwhile anyway. It acts only when
 * its timer and the monotonic clock agree: a timer late or early on that clock (the event loop was
 * blocked, the machine suspended, a test's clock) looks again shortly and leaves the lapse to the
 * next write. Returns its stop.
 */
export function watchDeadline(
  fence: Fence,
  options: { leaseMs: number; monotonic: Monotonic; lost: AbortSignal; due: () => void },
): () => void {
  const slack = Math.min(1_000, options.leaseMs / 10);
  const deadline = options.leaseMs - slack;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (delay: number) => {
    const armedAt = options.monotonic();
    timer = setTimeout(() => {
      if (options.lost.aborted) return;
      const off = options.monotonic() - armedAt - delay;
      if (fence.valid() || off > slack || off < -slack / 2)
        return arm(Math.max(deadline - fence.sinceRenewal(), slack));
      try {
        options.due();
      } catch {
        // Lost: `due` aborted `lost` (fence.check's onLapse, or another writer seen).
      }
      if (!options.lost.aborted) arm(Math.max(deadline - fence.sinceRenewal(), slack));
    }, delay);
    timer.unref();
  };
  arm(Math.max(deadline - fence.sinceRenewal(), 1));
  return () => clearTimeout(timer);
}
