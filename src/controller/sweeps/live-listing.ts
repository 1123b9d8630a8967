import type { Logger } from "../../logger.js";
import type { Deployment } from "../../schema/deployment.js";
import { errorMessage } from "../error-message.js";
import { systemTimers, type Timers } from "../queue/work-queue.js";

// The first reconcile and each drift sweep list live deployments once; the reconciles they queue
// read that listing instead of looking each deployment up. A change queued later looks up afresh.
// Listed deployments are kept as JSON text until taken. A drift sweep streams: it hands each listed
// object to the queue as its page arrives and reads the next page only once the queue has taken
// all but a few pages of them, so a sweep of 10,000 holds a few pages, not every deployment (10,000
// held from the sweep's start were the controller's memory peak: docs/controller.md). When the queue
// takes nothing for STALL_MS (busy with changes, objects waiting out a retry backoff), the objects
// still holding entries look themselves up instead and the sweep reads on.

export type ListingLimits = {
  /** Listed deployments a sweep keeps untaken before it reads the next page (5 pages of 100). */
  maxHeld: number;
  /** How long a sweep waits for the queue to take entries before it lets them go. */
  stallMs: number;
};
const LIMITS: ListingLimits = { maxHeld: 500, stallMs: 10_000 };

export type LiveListing = {
  /** Lists everything live now (startup); false (and a log line) when the API did not answer. */
  refresh: () => Promise<boolean>;
  /**
   * A drift sweep's listing, page by page: each listed deployment whose object `keyOf` names is
   * kept for that object's next reconcile and handed to `listed(key)` (to queue it). Resolves to
   * the names of everything live, or undefined when the API did not answer (logged) or the listing
   * was closed: objects not handed over yet are then looked up one by one.
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
  take: (key: string, name: string) => Deployment | null | undefined;
  /** The deployments of the startup listing not taken yet, parsed afresh (a copy). */
  live: () => Map<string, Deployment>;
  /** Ends a sweep's listing that waits for the queue (shutdown). */
  close: () => void;
};

export function createLiveListing(
  pages: () => AsyncIterable<Deployment[]>,
  log: Logger,
  timers: Timers = systemTimers,
  { maxHeld, stallMs }: ListingLimits = LIMITS,
): LiveListing {
  /** The startup listing, by deployment name. */
  let listed = new Map<string, string>();
  /** A sweep's listed deployments not taken yet, by object key. */
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
  const listFailed = (error: unknown) =>
    log.error({ err: errorMessage(error) }, "cannot list deployments; objects are looked up one by one");
  return {
    async refresh() {
      try {
        const next = new Map<string, string>();
        for await (const page of pages()) for (const d of page) next.set(d.name, JSON.stringify(d));
        listed = next;
        return true;
      } catch (error) {
        listFailed(error);
        return false;
      }
    },
    async stream(keyOf, handOver) {
      listed = new Map(); // the startup listing is stale now: never hand it out again
      letGo(); // nor what an earlier sweep's objects did not take
      const seen = new Set<string>();
      try {
        for await (const page of pages()) {
          while (held.size > maxHeld && !closed) if (!(await drained())) letGo();
          if (closed) return undefined;
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
        listFailed(error);
        return undefined;
      }
      return closed ? undefined : seen;
    },
    use: (key) => void uses.add(key),
    forget(key) {
      uses.delete(key);
      release(key);
    },
    take(key, name) {
      if (!uses.delete(key)) return undefined;
      const found = held.get(key) ?? listed.get(name);
      // Taken once: do not hold 10,000s of listed deployments until the next sweep.
      release(key);
      listed.delete(name);
      return found === undefined ? null : (JSON.parse(found) as Deployment);
    },
    live: () => new Map([...listed].map(([name, text]) => [name, JSON.parse(text) as Deployment])),
    close() {
      closed = true;
      wake?.();
    },
  };
}
