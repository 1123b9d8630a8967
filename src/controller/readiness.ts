// Two moments of startup, pure bookkeeping:
// - ready (/readyz 200): the leader has loaded its manifests (the first scan is done). Never tied
//   to the control plane's reachability nor to reconciles that wait for revisions, so the status
//   page and the webhook stay routed while the control plane is down (that is in /metrics
//   plumb_api_up, /status and the page).
// - settled: every object of the first scan has been reconciled once, successfully or not (the
//   drift checks wait for it).

export type Readiness = {
  ready: () => boolean;
  settled: () => boolean;
  /** An object of the first scan: settled waits for its first reconcile. */
  expect: (key: string) => void;
  /** The first scan is complete (ready); returns true when that already makes it settled. */
  scanned: () => boolean;
  /** `key` finished a reconcile; returns true when this made it settled. */
  settle: (key: string) => boolean;
};

export function createReadiness(): Readiness {
  const waiting = new Set<string>();
  let scanDone = false;
  const settled = () => scanDone && waiting.size === 0;
  return {
    ready: () => scanDone,
    settled,
    expect: (key) => void waiting.add(key),
    scanned() {
      scanDone = true;
      return settled();
    },
    settle: (key) => waiting.delete(key) && settled(),
  };
}
