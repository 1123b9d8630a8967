import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ResponseEvent } from "../../api/transport/http.js";
import type { ObjectStatus } from "../../status/status-types.js";
import { HEALTH_STATUSES, SYNC_STATUSES } from "../../status/status-types.js";

/** Prometheus metrics of one controller instance (its own Registry: no global state, tests run several). */
export type ControllerMetrics = ReturnType<typeof createControllerMetrics>;

export type MetricsSources = {
  /** Current status records, for objects by sync and health. */
  statuses: () => Iterable<ObjectStatus>;
  /** Files whose manifests are invalid right now. */
  invalidFiles: () => number;
  queue: () => { pending: number; running: number; backingOff: number };
  /** Every object of the first scan reconciled once since this process started (readiness.ts). */
  settled?: () => boolean;
};

export function createControllerMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const { reconciles, duration, drift, apiRequests, limiterWait, scans, pruneBlocked, notifications } =
    createCounters(registry);
  registerStatusGauges(registry, sources);

  // The control plane as the controller last saw it: down on 401/403 (wrong key) or no answer.
  let apiState: "unknown" | "up" | "down" = "unknown";
  const apiUp = new Gauge({
    name: "plumb_api_up",
    help: "1 when the last control plane request got an answer other than 401/403, 0 when it did not (wrong key, unreachable)",
    registers: [registry],
  });
  const lastSync = new Gauge({
    name: "plumb_last_successful_sync_timestamp_seconds",
    help: "Unix time of the last reconcile or drift check that succeeded",
    registers: [registry],
  });
  const leader = new Gauge({
    name: "plumb_leader",
    help: "1 while this controller holds the state lock and reconciles, 0 on standby",
    registers: [registry],
  });

  return {
    registry,
    pruneBlocked() {
      pruneBlocked.inc();
    },
    notified(event: string, result: string) {
      notifications.inc({ event, result });
    },
    apiState: () => apiState,
    synced(nowMs: number) {
      lastSync.set(nowMs / 1000);
    },
    leading(isLeader: boolean) {
      leader.set(isLeader ? 1 : 0);
    },
    reconciled(reason: string, result: string, seconds: number) {
      reconciles.inc({ reason, result });
      duration.observe({ reason }, seconds);
    },
    driftDetected(kind: string, reason: string) {
      drift.inc({ kind, reason });
    },
    scanned(source: string, result: "ok" | "invalid" | "error" | "deferred") {
      scans.inc({ source, result });
    },
    /** Pass as the API clients' onResponse hook. */
    onResponse(event: ResponseEvent) {
      apiRequests.inc({ method: event.method, route: event.route, code: String(event.status) });
      apiState = event.status === 0 || event.status === 401 || event.status === 403 ? "down" : "up";
      apiUp.set(apiState === "up" ? 1 : 0);
      if (event.waitedMs > 0) limiterWait.inc(event.waitedMs / 1000);
    },
  };
}

/** The counters (and the reconcile duration histogram) the controller's events add to. */
function createCounters(registry: Registry) {
  const reconciles = new Counter({
    name: "plumb_reconcile_total",
    help: "Reconciles by trigger and result",
    labelNames: ["reason", "result"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "plumb_reconcile_duration_seconds",
    help: "Duration of one object's reconcile, from start to recorded status",
    labelNames: ["reason"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const drift = new Counter({
    name: "plumb_drift_detected_total",
    help: "Objects found differing from git by a drift check",
    labelNames: ["kind", "reason"] as const,
    registers: [registry],
  });
  const apiRequests = new Counter({
    name: "plumb_api_requests_total",
    help: "HTTP requests to the control plane by method, route and status code (0: no response)",
    labelNames: ["method", "route", "code"] as const,
    registers: [registry],
  });
  const limiterWait = new Counter({
    name: "plumb_rate_limiter_wait_seconds_total",
    help: "Time requests spent waiting for the client-side rate limiter",
    registers: [registry],
  });
  const scans = new Counter({
    name: "plumb_manifest_scans_total",
    help: "Manifest scans (directory events, git fetches)",
    labelNames: ["source", "result"] as const,
    registers: [registry],
  });
  const pruneBlocked = new Counter({
    name: "plumb_prune_blocked_total",
    help: "Prune sweeps whose deletions waited: over --prune-max per --prune-window",
    registers: [registry],
  });

  const notifications = new Counter({
    name: "plumb_notifications_total",
    help: "--notify deliveries by event and result (sent, failed after retries, dropped over the bound)",
    labelNames: ["event", "result"] as const,
    registers: [registry],
  });
  return { reconciles, duration, drift, apiRequests, limiterWait, scans, pruneBlocked, notifications };
}

/** Gauges read at scrape time: objects by sync and health, invalid files, the queue. */
function registerStatusGauges(registry: Registry, sources: MetricsSources): void {
  new Gauge({
    name: "plumb_objects",
    help: "Managed objects by sync status and health",
    labelNames: ["sync", "health"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const s of sources.statuses())
        counts.set(`${s.sync}/${s.health}`, (counts.get(`${s.sync}/${s.health}`) ?? 0) + 1);
      for (const sync of SYNC_STATUSES)
        for (const health of HEALTH_STATUSES)
          this.set({ sync, health }, counts.get(`${sync}/${health}`) ?? 0);
    },
  });
  new Gauge({
    name: "plumb_invalid_manifest_files",
    help: "Manifest files with errors (their objects are not reconciled until fixed)",
    registers: [registry],
    collect() {
      this.set(sources.invalidFiles());
    },
  });
  if (sources.settled) {
    const settled = sources.settled;
    new Gauge({
      name: "plumb_settled",
      help: "1 once every object of the first scan has been reconciled once since start (as GET /status says), 0 before",
      registers: [registry],
      collect() {
        this.set(settled() ? 1 : 0);
      },
    });
  }
  new Gauge({
    name: "plumb_queue_items",
    help: "Work items by state",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const q = sources.queue();
      this.set({ state: "pending" }, q.pending);
      this.set({ state: "running" }, q.running);
      this.set({ state: "backing_off" }, q.backingOff);
    },
  });
}
