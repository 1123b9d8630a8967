import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import { systemClock } from "../clock.js";
import { loadManifests } from "../manifest/load.js";
import { maxManifestBytesFrom } from "../manifest/parse.js";
import type { StatusLocation } from "../status/status-source.js";
import { agentUrlFallback } from "../reconcile/session.js";
import { createControllerClients } from "./api-clients.js";
import type { Controller, ControllerOptions } from "./controller-types.js";
import { checkDriftBranchOptions, createDriftBranchWriter } from "./drift-branch.js";
import { createDriftSweep } from "./drift-sweep.js";
import { errorMessage } from "./error-message.js";
import { waitToLead } from "./leadership.js";
import { warnUnknownSecrets } from "./unknown-secrets-warning.js";
import { createLiveListing } from "./live-listing.js";
import { checkManifestRoot, openManifestSource } from "./manifest-source.js";
import { startManifestThread } from "./manifest-thread.js";
import { createPruneSweep } from "./prune-sweep.js";
import { createControllerMetrics } from "./metrics.js";
import { createReadiness } from "./readiness.js";
import { createReconcileWorker } from "./reconcile-worker.js";
import { stopController } from "./shutdown.js";
import { createSnapshotScanner } from "./snapshot-scanner.js";
import { openStatusBook } from "./status-book.js";
import { buildStatusJson } from "./status-view.js";
import { createSync, serveHttp, startTriggers } from "./triggers.js";
import { createActivityBook } from "./activity-book.js";
import { createPageEvents } from "./page-events.js";
import { createRequestWindow } from "./request-window.js";
import { startControllerNotifier } from "./controller-notifier.js";
import { createStatusPageRoutes } from "./status-page-source.js";
import { DEFAULT_API_KEY_CATEGORY } from "../api/rate-limiter.js";
import { startWorkQueue, systemTimers } from "./work-queue.js";

export type { Controller, ControllerOptions, ControllerSource } from "./controller-types.js";

// `plumb controller`: wires the parts together. Manifests come from a source (directory or git) into
// a snapshot scanner; changes and drift sweeps queue work; the worker reconciles one object with the
// apply engine and records status; triggers and HTTP say when to look again.
// Startup checks what can fail (manifest root, listen port) before any reconcile or watcher starts,
// and a failure stops whatever was started, so the process exits with the error instead of running on.

export async function startController(options: ControllerOptions): Promise<Controller> {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const log = options.logger;
  let stopping = false;
  // What to undo, newest first, when startup fails half-way.
  const started: Array<() => Promise<unknown>> = [];

  checkDriftBranchOptions(options);
  const source = await openManifestSource(options.source, options.env, log);
  started.push(() => source.close());
  try {
    await checkManifestRoot(options.source, source.manifestRoot);
    const location: StatusLocation = {
      root: source.repoRoot,
      statusDir: options.statusDir,
      statusBranch: options.statusBranch,
      gitEnv: source.gitEnv, // the status branch is pushed with the same credentials as fetches
    };
    // One leader per status store: a second controller waits here as a standby.
    const lock = await waitToLead({
      location,
      listen: options.listen,
      statusToken: options.statusToken,
      leaseMs: options.lockLeaseMs,
      log,
      signal: options.signal,
    });
    started.push(() => lock.release());
    lock.lost.addEventListener("abort", () =>
      log.error({ err: errorMessage(lock.lost.reason) }, "lost the state lock: stopping"),
    );
    // The status page hears of every record and reconcile through the activity book.
    const activity = createActivityBook();
    const pageEvents = createPageEvents(timers);
    started.push(async () => pageEvents.close());
    activity.listen((key) => pageEvents.changed(key));
    const book = await openStatusBook({ location, timers, log, onChange: (key) => activity.changed(key) });
    started.push(() => book.flush());
    const metrics = createControllerMetrics({
      statuses: () => book.statuses.values(),
      invalidFiles: () => scanner.snapshot().invalid.size,
      queue: () => queue.stats(),
    });
    let httpUrl: string | undefined; // set once HTTP is bound (below)
    const notifier = startControllerNotifier({
      notify: options.notify,
      pageUrl: () => httpUrl,
      lockLost: lock.lost,
      metrics,
      timers,
      log,
      fetch: options.fetch,
    });
    const budget = options.apiRateLimit ?? DEFAULT_API_KEY_CATEGORY;
    const requests = createRequestWindow(budget.windowMs);
    const { controlPlane, ports, platform } = createControllerClients({
      api: options.api,
      clock,
      onResponse: (e) => {
        metrics.onResponse(e);
        requests.sent(clock.now());
      },
      fetch: options.fetch,
      rateLimit: options.apiRateLimit,
    });
    const listing = createLiveListing(() => controlPlane.listDeployments(), log);
    const readiness = createReadiness();
    metrics.leading(true);
    // Ready means reconciling for real: not while the control plane refuses the key or is unreachable.
    const ready = () => readiness.ready() && metrics.apiHealthy();

    // Queue and scanner do nothing until the first scan below.
    const queue = startWorkQueue({
      concurrency: options.concurrency,
      debounceMs: 0, // file events are debounced before the rescan
      backoffBaseMs: options.backoffBaseMs,
      backoffMaxMs: options.backoffMaxMs,
      timers,
      worker: createReconcileWorker({
        context: {
          root: source.manifestRoot,
          env: options.env,
          clock,
          ports,
          platform,
          statuses: book.statuses,
          record: book.record,
          gitCommit: source.commit,
          selfHeal: options.selfHeal,
          timeoutMs: options.timeoutMs,
          pollIntervalMs: options.pollIntervalMs,
          maxPollIntervalMs: options.maxPollIntervalMs,
          agentUrlFallback: agentUrlFallback(options.api.apiUrl),
          server: { client: ports.controlPlane, setting: options.api.mode, apiUrl: options.api.apiUrl },
          // As plan: leave a threadpool slot for file reads and DNS while reconciles check secrets.
          fingerprintLimit: pLimit(Math.max(1, Math.min(3, availableParallelism()))),
        },
        snapshot: () => scanner.snapshot(),
        listing,
        metrics,
        failures: (key) => queue.failures(key),
        activity,
        notifier,
        settled: (key) => {
          if (readiness.settle(key))
            log.info({ objects: scanner.snapshot().objects.size }, "first reconcile finished: ready");
        },
        clock,
        log,
      }),
    });
    started.push(() => queue.stop(1_000));

    // The first scan queues everything in git against one listing of live; later changes look up afresh.
    let starting = true;
    let listedAtStart = false;
    // Parsing runs on a worker thread, so a hostile file never stalls health probes or reconciles.
    const maxBytes = maxManifestBytesFrom(options.env);
    const manifestThread = startManifestThread(maxBytes);
    if (manifestThread) started.push(() => manifestThread.close());
    const scanner = createSnapshotScanner({
      root: source.manifestRoot,
      load: (root) => manifestThread?.load(root) ?? loadManifests(root, { maxBytes }),
      afterScan: createPruneSweep({
        enabled: options.prune === true,
        max: options.pruneMax,
        statuses: book.statuses,
        forget: book.forget,
        port: controlPlane,
        clock,
        timeoutMs: options.timeoutMs,
        log,
        pruned: (name, id) =>
          notifier?.notify({
            event: "pruned",
            object: { kind: "Deployment", name },
            id,
            revision: null,
            fields: [],
            message: "deleted: its manifest was removed from git (--prune)",
          }),
      }),
      clock,
      log,
      metrics,
      statuses: book.statuses,
      record: book.record,
      changed(key) {
        if (starting) readiness.expect(key);
        if (starting && listedAtStart) listing.use(key);
        else listing.forget(key);
        queue.enqueue(key, "change");
      },
      removed: (key) => queue.cancel(key),
      commit: source.commit,
      stopping: () => stopping,
    });
    const sync = createSync({ source, scan: scanner.scan, metrics, log, stopping: () => stopping });
    const sweep = createDriftSweep({
      snapshot: scanner.snapshot,
      statuses: book.statuses,
      listing,
      enqueue: (key) => queue.enqueue(key, "drift"),
      metrics,
      log,
      active: () => !stopping && readiness.ready(),
      synced: () => metrics.synced(clock.now()),
    });
    // --drift-branch: drifted fields are also written back to a branch of the git source.
    const writeBack = options.driftBranch
      ? createDriftBranchWriter({
          branch: options.driftBranch,
          source,
          statuses: book.statuses,
          readers: { controlPlane, platform },
          env: options.env,
          log,
        })
      : undefined;
    const checkDrift = async () => {
      await sweep();
      if (writeBack && !stopping && readiness.ready()) await writeBack();
    };
    const status = () =>
      buildStatusJson({
        ready: ready(),
        source: { kind: source.kind, location: source.location, commit: source.commit() },
        statuses: book.statuses.values(),
        snapshot: scanner.snapshot(),
        queue: queue.stats(),
      });
    // Filled in once the triggers start (after the first scan); the page asks before that too.
    const schedule = { nextDriftCheck: (): Date | null => null };
    const page = createStatusPageRoutes({
      header: {
        ready,
        source,
        branch: options.source.kind === "git" ? options.source.branch : null,
        apiUrl: options.api.apiUrl,
        apiState: () => metrics.apiState(),
        requests: () => requests.count(clock.now()),
        budget,
        nextDriftCheck: () => schedule.nextDriftCheck(),
        queue: () => queue.stats(),
      },
      snapshot: () => scanner.snapshot(),
      statuses: book.statuses,
      activity,
      controlPlane,
      events: pageEvents,
      clock,
    });
    // Bound before any reconcile: a taken port is a startup error, not a controller without probes.
    const http = options.listen
      ? await serveHttp(options.listen, {
          ready,
          notReady: () =>
            readiness.ready()
              ? {
                  reason: `control plane ${metrics.apiState() === "down" ? "refuses the API key or is unreachable" : "not checked yet"}`,
                }
              : { reason: "first reconcile of every object not finished" },
          status,
          statusToken: options.statusToken,
          webhookSecret: options.webhookSecret,
          sync,
          metrics,
          page,
          log,
        })
      : undefined;
    if (http) {
      httpUrl = http.url;
      started.push(() => http.close());
      log.info({ url: http.url }, "serving the status page at / and /healthz /readyz /metrics /status");
    }

    listedAtStart = await listing.refresh();
    // Reconciles take entries from the listing as they start: keep the startup view for the warning.
    const liveAtStart = listedAtStart ? new Map(listing.live()) : undefined;
    const recordedAtStart = new Map(book.statuses);
    started.push(() => scanner.settled());
    await scanner.scan("start");
    starting = false;
    if (liveAtStart) warnUnknownSecrets(scanner.snapshot(), liveAtStart, recordedAtStart, log);
    if (readiness.scanned()) log.info({ objects: 0 }, "nothing to reconcile: ready");

    const activeTriggers = await startTriggers({
      source,
      intervalMs: options.source.kind === "git" ? options.source.intervalMs : undefined,
      debounceMs: options.debounceMs,
      driftSchedule: options.driftSchedule,
      scan: scanner.scan,
      sync,
      checkDrift,
      timers,
      log,
    });
    schedule.nextDriftCheck = () => activeTriggers.nextDriftCheck();

    return {
      url: http?.url,
      manifestRoot: source.manifestRoot,
      ready,
      status,
      lockLost: lock.lost,
      rescan: () => scanner.scan("manual"),
      sync: () => sync("manual"),
      checkDrift,
      async stop(graceMs = 10_000) {
        if (stopping) return;
        stopping = true;
        await stopController({
          graceMs,
          log,
          triggers: activeTriggers,
          scanner,
          queue,
          book,
          lock,
          http,
          source,
        });
        await manifestThread?.close();
        // Notifications of the last reconciles get a moment; a dead receiver does not hold shutdown.
        await notifier?.drain(2_000);
      },
    };
  } catch (error) {
    stopping = true;
    for (const undo of started.reverse()) await undo().catch(() => undefined);
    throw error;
  }
}
