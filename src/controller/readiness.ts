// Ready (/readyz) once the first scan is done and every object it found has been reconciled once,
// successfully or not. Pure bookkeeping.

export type Readiness = {
  ready: () => boolean;
  /** An object of the first scan: ready waits for its first reconcile. */
  expect: (key: string) => void;
  /** The first scan is complete; returns true when that already makes the controller ready. */
  scanned: () => boolean;
  /** `key` finished a reconcile; returns true when this made the controller ready. */
  settle: (key: string) => boolean;
};

export function createReadiness(): Readiness {
  const waiting = new Set<string>();
  let scanDone = false;
  const ready = () => scanDone && waiting.size === 0;
  return {
    ready,
    expect: (key) => void waiting.add(key),
    scanned() {
      scanDone = true;
      return ready();
    },
    settle: (key) => waiting.delete(key) && ready(),
  };
}
