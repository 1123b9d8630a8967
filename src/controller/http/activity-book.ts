import type { Activity } from "../../status-page/page-model.js";

// The last reconcile of each object (when, why, result, duration, drifted fields, the redacted plan)
// for the status page. Memory only: it describes this process's work, and a restart starts afresh.
// Listeners hear every changed key (the page's live updates); records do the same via `changed`.

export type ActivityBook = {
  get(key: string): Activity | undefined;
  record(key: string, activity: Activity): void;
  forget(key: string): void;
  /** Tells the listeners that `key` changed (a status record was written). */
  changed(key: string): void;
  /** Returns the function that stops listening. */
  listen(listener: (key: string) => void): () => void;
};

export function createActivityBook(): ActivityBook {
  const activities = new Map<string, Activity>();
  const listeners = new Set<(key: string) => void>();
  const changed = (key: string) => {
    for (const listener of listeners) listener(key);
  };
  return {
    get: (key) => activities.get(key),
    record(key, activity) {
      activities.set(key, activity);
      changed(key);
    },
    forget(key) {
      activities.delete(key);
      changed(key);
    },
    changed,
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
