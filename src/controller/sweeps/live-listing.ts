import type { Logger } from "../../logger.js";
import type { Deployment } from "../../schema/deployment.js";
import { errorMessage } from "../error-message.js";
import { systemTimers, type Timers } from "../queue/work-queue.js";

// The first reconcile and each drift sweep list live deployments once; the reconciles they queue
// read that listing instead of looking each deployment up. A change queued later looks up afresh.
// The listing streams: each listed object is handed to the queue as its page arrives (kept as JSON
// text until taken) and the next page is read only once the queue has taken all but a few pages of
// them, so a listing of 10,000 holds a few pages, not every deployment (10,000 held from the
// listing's start were the controller's memory peak, at a drift sweep and at a restart:
// docs/controller.md). When the queue takes nothing for STALL_MS (busy with changes, objects waiting
// out a retry backoff), the objects still holding entries look themselves up instead and the
// listing reads on.

export type ListingLimits = {
  /** Listed deployments the listing keeps untaken before it reads the next page (5 pages of 100). */
  maxHeld: number;
  /** How long the listing waits for the queue to take entries before it lets them go. */
  stallMs: number;
};
const LIMITS: ListingLimits = { maxHeld: 500, stallMs: 10_000 };

export type LiveListing = {
  /**
   * One listing of everything live (the first reconcile, a drift sweep), page by page: each listed
   * deployment whose object `keyOf` names is kept for that object's next reconcile and handed to
   * `listed(key)` (to queue it). Resolves to the names of everything live, or undefined when the
   * API did not answer (logged) or the listing was closed: objects not handed over yet are then
   * looked up one by one.
   */
  stream: (
    keyOf: (name: string) => string | undefined,
    listed: (key: string) => void,
  ) => Promise<ReadonlySet<string> | undefined>;
  /** The next reconcile of `key` uses the listing (not live, unless the listing holds it). */
  use: (key: string) => void;
  /** The next reconcile of `key` looks it up (its manifest changed, or it left the manifests). */
  forget: (key: string) => void;
  /**
   * For the reconcile of `key` starting now: its deployment from the listing (null: not live), or
   * undefined when it must be looked up. Each use is taken once.
   */
  take: (key: string) => Deployment | null | undefined;
  /** How many listed deployments are held, not taken yet (at most maxHeld plus a page). */
  held: () => number;
  /** Ends a listing that waits for the queue (shutdown). */
  close: () => void;
};

/** The entries a listing holds for the queue, and its wait for the queue to take them. */
function createHeldEntries(timers: Timers, { maxHeld, stallMs }: ListingLimits) {
  /** Listed deployments not taken yet, by object key. */
  const held = new Map<string, string>();
  const uses = new Set<string>();
  let closed = false;
  let wake: (() => void) | undefined;
  const release = (key: string) => {
    held.delete(key);
    if (held.size <= maxHeld) wake?.();
  };
  /** Until the queue has taken all but maxHeld entries; false when it took none for stallMs. */
  const drained = () =>
    new Promise<boolean>((resolve) => {
      const cancel = timers.setTimeout(() => resolve(false), stallMs);
      wake = () => {
        cancel();
        resolve(true);
      };
    }).finally(() => (wake = undefined));
  /** Entries a stalled queue did not take: their objects look themselves up when their turn comes. */
  const letGo = () => {
    for (const key of held.keys()) uses.delete(key);
    held.clear();
  };
  return {
    held,
    uses,
    release,
    letGo,
    closed: () => closed,
    /** Waits while more than maxHeld are held (letting them go when the queue stalls); false once closed. */
    async room(): Promise<boolean> {
      while (held.size > maxHeld && !closed) if (!(await drained())) letGo();
      return !closed;
    },
    close() {
      closed = true;
      wake?.();
    },
  };
}

export function createLiveListing(
  pages: () => AsyncIterable<Deployment[]>,
  log: Logger,
  timers: Timers = systemTimers,
  limits: ListingLimits = LIMITS,
): LiveListing {
  const entries = createHeldEntries(timers, limits);
  const { held, uses } = entries;
  return {
    async stream(keyOf, handOver) {
      entries.letGo(); // what an earlier listing's objects did not take is stale now
      const seen = new Set<string>();
      try {
        for await (const page of pages()) {
          if (!(await entries.room())) return undefined;
          for (const d of page) {
            seen.add(d.name);
            const key = keyOf(d.name);
            if (key === undefined) continue;
            held.set(key, JSON.stringify(d));
            uses.add(key);
            handOver(key);
          }
        }
      } catch (error) {
        log.error({ err: errorMessage(error) }, "cannot list deployments; objects are looked up one by one");
        return undefined;
      }
      return entries.closed() ? undefined : seen;
    },
    use: (key) => void uses.add(key),
    forget(key) {
      uses.delete(key);
      entries.release(key);
    },
    take(key) {
      if (!uses.delete(key)) return undefined;
      const found = held.get(key);
      entries.release(key); // taken once: do not hold listed deployments until the next listing
      return found === undefined ? null : (JSON.parse(found) as Deployment);
    },
    held: () => held.size,
    close: () => entries.close(),
  };
}
