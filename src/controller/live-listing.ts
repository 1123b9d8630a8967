import type { Logger } from "../logger.js";
import type { Deployment } from "../schema/deployment.js";
import { errorMessage } from "./error-message.js";

// The first reconcile and each drift sweep list live deployments once; the reconciles they queue
// read that listing instead of looking each deployment up. A change queued later looks up afresh.

export type LiveListing = {
  /** Lists live now; false (and a log line) when the API did not answer: objects are looked up one by one. */
  refresh: () => Promise<boolean>;
  /** The next reconcile of `key` uses the listing. */
  use: (key: string) => void;
  /** The next reconcile of `key` looks it up (its manifest changed since the listing). */
  forget: (key: string) => void;
  /**
   * For the reconcile of `key` starting now: its deployment from the listing (null: not live), or
   * undefined when it must be looked up. Each use is taken once.
   */
  take: (key: string, name: string) => Deployment | null | undefined;
  /** Live deployments by name, as of the last successful listing (each one let go once taken). */
  live: () => ReadonlyMap<string, Deployment>;
};

export function createLiveListing(list: () => Promise<Deployment[]>, log: Logger): LiveListing {
  let listed = new Map<string, Deployment>();
  const uses = new Set<string>();
  return {
    async refresh() {
      try {
        listed = new Map((await list()).map((d) => [d.name, d]));
        return true;
      } catch (error) {
        log.error({ err: errorMessage(error) }, "cannot list deployments; objects are looked up one by one");
        return false;
      }
    },
    use: (key) => void uses.add(key),
    forget: (key) => void uses.delete(key),
    take(key, name) {
      if (!uses.delete(key)) return undefined;
      const found = listed.get(name) ?? null;
      // Taken once: do not hold 10,000s of listed deployments until the next sweep.
      listed.delete(name);
      return found;
    },
    live: () => listed,
  };
}
