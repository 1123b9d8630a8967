import type { Logger } from "../logger.js";
import type { Deployment } from "../schema/deployment.js";
import { errorMessage } from "./error-message.js";

// The first reconcile and each drift sweep list live deployments once; the reconciles they queue
// read that listing instead of looking each deployment up. A change queued later looks up afresh.
// Each listed deployment is kept as its JSON text until taken, read a page at a time: 10,000 parsed
// deployments held through a sweep were the controller's memory peak (docs/controller.md).

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
  /** Names of the live deployments, as of the last successful listing (each one let go once taken). */
  names: () => ReadonlySet<string>;
  /** The listed deployments not taken yet, parsed afresh (a copy). */
  live: () => Map<string, Deployment>;
};

export function createLiveListing(pages: () => AsyncIterable<Deployment[]>, log: Logger): LiveListing {
  let listed = new Map<string, string>();
  const uses = new Set<string>();
  return {
    async refresh() {
      try {
        const next = new Map<string, string>();
        for await (const page of pages()) for (const d of page) next.set(d.name, JSON.stringify(d));
        listed = next;
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
      const found = listed.get(name);
      // Taken once: do not hold 10,000s of listed deployments until the next sweep.
      listed.delete(name);
      return found === undefined ? null : (JSON.parse(found) as Deployment);
    },
    names: () => new Set(listed.keys()),
    live: () => new Map([...listed].map(([name, text]) => [name, JSON.parse(text) as Deployment])),
  };
}
