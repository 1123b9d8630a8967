import { systemClock } from "../clock.js";
import { resolveStatusDir, type StatusLocation } from "../git/status-source.js";
import { createControllerClients } from "./api-clients.js";
import { createDriftCheck } from "./sweeps/drift-check.js";
import { createPromotionBranchSweep } from "./sweeps/promotion-branch.js";
import type { AutoPromotionDeps } from "../promote/auto-promotion.js";
import { controllerHandlers } from "./http/serve-http.js";
import { createControllerScanner } from "./snapshot/sliced-scanner.js";
import { createControllerWorker } from "./queue/worker-context.js";
import { createSync, startTriggers } from "./source/triggers.js";
import type { Controller, ControllerOptions } from "./controller-types.js";
import { waitToLead } from "./leadership.js";
import { warnUnknownSecrets } from "./sweeps/unknown-secrets-warning.js";
import { createLiveListing } from "./sweeps/live-listing.js";
import type { ManifestSource } from "./source/manifest-source.js";
import { createControllerMetrics } from "./http/metrics.js";
import { createReadiness } from "./readiness.js";
import type { ControllerHttp, HttpHandlers } from "./http/http-server.js";
import type { LoadResult } from "../manifest/load.js";
import type { StateLock } from "../lock/index.js";
import type { Registry } from "prom-client";
import type { ObjectStatus } from "../status/status-types.js";
import { stopController } from "./shutdown.js";
import { openStatusBook } from "./status-book.js";
import { legacyStatusLocation } from "../git/status-source.js";
import { statusReader } from "./http/status-view.js";
import { createActivityBook } from "./http/activity-book.js";
import { createPageEvents } from "./http/page-events.js";
import { createRequestWindow } from "./http/request-window.js";
import { startControllerNotifier } from "./notify/start-notifier.js";
import { DEFAULT_API_KEY_CATEGORY } from "../api/transport/rate-limiter.js";
import { startWorkQueue, systemTimers } from "./queue/work-queue.js";

// One status store's reconciler: the state lock, the status book, the API clients and their rate
// budget, the work queue, the snapshot scanner and the drift check. Without environments the
// controller is one of these on the whole tree, serving HTTP and running its own triggers; with
// environments (environments/environment-controller.ts) one per environment, each on that
// environment's view of the tree, its store and its control plane, sharing the source, the triggers
// and the HTTP side. A failure during startup stops whatever was started.

/** One store's reconciler as the environment controller composes it (no HTTP, no triggers of its own). */
export type Store = Controller & {
  /** What the HTTP side answers for this store (the environment controller composes them). */
  handlers: HttpHandlers | undefined;
  /** Rescans now with this trigger name (the shared triggers call it). */
  scan: (trigger: string) => Promise<void>;
  /** Whether the first scan is done (/readyz). */
  loaded: () => boolean;
  registry: Registry;
  /** Its status records (the environment matrix). */
  statuses: ReadonlyMap<string, ObjectStatus>;
  /** Counts a scan (the shared triggers' fetch errors). */
  scanned: (source: string, result: "ok" | "invalid" | "error") => void;
};

export type StoreShared = {
  source: ManifestSource;
  /** Single mode: the HTTP side this store serves, triggers its own; undefined with environments. */
  http: ControllerHttp | undefined;
  /** With environments: this store's environment (location, manifests) and no triggers of its own. */
  environment?: {
    name: string;
    location: StatusLocation;
    load: (root: string) => Promise<LoadResult>;
    /** The shared drift schedule's next run (the page's header). */
    nextDriftCheck: () => Date | null;
    /** The shared HTTP side's address (links in notifications). */
    pageUrl: () => string | undefined;
    /** promotion.auto with --promote-branch-prefix: what opens its promotions (promotion-branch.ts). */
    promotion?: AutoPromotionDeps | undefined;
  };
  /** The state lock is taken by the caller (an environment's claim) rather than waited for here. */
  lock?: StateLock;
};

export async function startStore(options: ControllerOptions, shared: StoreShared): Promise<Store> {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const log = options.logger;
  let stopping = false;
  const { source, http } = shared;
  const environment = shared.environment;
  // What to undo, newest first, when startup fails half-way.
  const started: Array<() => Promise<unknown>> = [];
  let scanDone = false;
  try {
    // Status lives beside the manifests (--path), where plan, apply and drift look (docs/status.md).
    const location: StatusLocation = environment?.location ?? {
      root: source.manifestRoot,
      statusDir: options.statusDir,
      statusBranch: options.statusBranch,
      gitEnv: source.gitEnv, // the status branch is pushed with the same credentials as fetches
    };
    // One leader per status store: a second controller waits here as a standby.
    const lock =
      shared.lock ??
      (await waitToLead({
        location,
        http,
        statusToken: options.statusToken,
        leaseMs: options.lockLeaseMs,
        log,
        signal: options.signal,
      }));
    started.push(() => lock.release());
    // The status page hears of every record and reconcile through the activity book.
    const activity = createActivityBook();
    const pageEvents = createPageEvents(timers);
    started.push(async () => pageEvents.close());
    activity.listen((key) => pageEvents.changed(key));
    const book = await openStatusBook({
      location,
      legacy: environment ? undefined : legacyStatusLocation(location, source.repoRoot),
      timers,
      log,
      onChange: (key) => activity.changed(key),
      fence: lock.assertHeld, // a leader that lost the lock records and publishes nothing
      pushFence: lock.pushFence,
    });
    started.push(() => book.flush());
    const metrics = createControllerMetrics({
      statuses: () => book.statuses.values(),
      invalidFiles: () => scanner.snapshot().invalid.size,
      queue: () => queue.stats(),
    });
    const notifier = startControllerNotifier({
      notify: options.notify,
      pageUrl: () => http?.url ?? environment?.pageUrl(),
      lockLost: lock.lost,
      environment: environment?.name,
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
      beforeWrite: lock.assertHeld, // checked after the limiter's and retries' waits
    });
    const listing = createLiveListing(() => controlPlane.deploymentPages(), log, timers);
    const readiness = createReadiness();
    metrics.leading(true);
    // Ready once the manifests are loaded: the control plane's health is in metrics and /status.
    const ready = readiness.ready;

    // Queue and scanner do nothing until the first scan below.
    const queue = startWorkQueue({
      concurrency: options.concurrency,
      debounceMs: 0, // file events are debounced before the rescan
      backoffBaseMs: options.backoffBaseMs,
      backoffMaxMs: options.backoffMaxMs,
      timers,
      worker: createControllerWorker(options, {
        source,
        clients: { ports, platform },
        book,
        snapshot: () => scanner.snapshot(),
        listing,
        metrics,
        failures: (key) => queue.failures(key),
        activity,
        notifier,
        settled: (key) => {
          if (readiness.settle(key))
            log.info({ objects: scanner.snapshot().objects.size }, "first reconcile finished");
        },
        clock,
        log,
      }),
    });
    started.push(() => queue.stop(1_000));

    // The first scan queues everything in git against one listing of live; later changes look up afresh.
    let starting = true;
    let listedAtStart = false;
    const { scanner, loader } = createControllerScanner(options, {
      source,
      load: environment?.load,
      book,
      statusDir: resolveStatusDir(location),
      activity,
      controlPlane,
      notifier,
      metrics,
      changed(key) {
        if (starting) readiness.expect(key);
        if (starting && listedAtStart) listing.use(key);
        else listing.forget(key);
        queue.enqueue(key, "change");
      },
      removed: (key) => {
        queue.cancel(key);
        listing.forget(key);
      },
      stopping: () => stopping,
      clock,
      timers,
      log,
    });
    started.push(() => loader.close());
    const sync = createSync({ source, scan: scanner.scan, metrics, log, stopping: () => stopping });
    const working = () => !stopping && readiness.settled();
    const checkDrift = createDriftCheck(options, {
      sweep: {
        snapshot: scanner.snapshot,
        statuses: book.statuses,
        listing,
        enqueue: (key) => queue.enqueue(key, "drift"),
        metrics,
        log,
        active: working,
        synced: () => metrics.synced(clock.now()),
      },
      writeBack: { source, statuses: book.statuses, readers: { controlPlane, platform } },
      writing: working,
      promote: environment?.promotion
        ? createPromotionBranchSweep({ ...environment.promotion, notifier, log })
        : undefined,
      log,
    });
    const status = statusReader({ ready, settled: readiness.settled, source, book, scanner, queue });
    // Filled in once the triggers start (after the first scan); the page asks before that too.
    const schedule = { nextDriftCheck: (): Date | null => null };
    const handlers = controllerHandlers(options, {
      ...{ ready, metrics, status, sync, source, scanner, book, queue, activity, controlPlane },
      header: {
        requests: () => requests.count(clock.now()),
        budget,
        nextDriftCheck: () => schedule.nextDriftCheck(),
      },
      events: pageEvents,
      clock,
      log,
    });
    http?.use(handlers);
    if (http) log.info({ url: http.url }, "serving the status page at / and /livez /readyz /metrics /status");
    listedAtStart = await listing.refresh();
    // Reconciles take entries from the listing as they start: keep the startup view for the warning.
    const liveAtStart = listedAtStart ? listing.live() : undefined;
    const recordedAtStart = new Map(book.statuses);
    started.push(() => scanner.settled());
    // Watching before the first scan: a save between the two is rescanned, not lost (scans run one
    // at a time); a scheduled drift check waits for the first scan's snapshot.
    const activeTriggers = environment
      ? { stop: async () => undefined, nextDriftCheck: environment.nextDriftCheck }
      : await startTriggers({
          source,
          intervalMs: options.source.kind === "git" ? options.source.intervalMs : undefined,
          debounceMs: options.debounceMs,
          driftSchedule: options.driftSchedule,
          scan: scanner.scan,
          sync,
          checkDrift: () => (starting ? Promise.resolve() : checkDrift()),
          timers,
          log,
        });
    started.push(() => activeTriggers.stop());
    await scanner.scan("start");
    starting = false;
    scanDone = true;
    if (liveAtStart) warnUnknownSecrets(scanner.snapshot(), liveAtStart, recordedAtStart, log);
    schedule.nextDriftCheck = () => activeTriggers.nextDriftCheck();
    const objects = scanner.snapshot().objects.size; // ready (/readyz 200): loaded and watched
    log.info({ objects, settled: readiness.scanned() }, "manifests loaded: ready");

    return {
      url: http?.url,
      handlers: environment ? handlers : undefined,
      scan: scanner.scan,
      loaded: () => scanDone,
      registry: metrics.registry,
      statuses: book.statuses,
      scanned: (trigger, result) => metrics.scanned(trigger, result),
      manifestRoot: source.manifestRoot,
      ready: readiness.settled,
      status,
      lockLost: lock.lost,
      rescan: () => scanner.scan("manual"),
      sync: () => sync("manual"),
      checkDrift,
      async stop(graceMs = 10_000) {
        if (stopping) return;
        stopping = true;
        listing.close(); // a drift sweep waiting for the queue to take its listing ends
        await stopController({
          graceMs,
          log,
          triggers: activeTriggers,
          scanner,
          queue,
          book,
          lock,
          http,
          source: environment ? { close: async () => undefined } : source, // the source is shared
        });
        await loader.close();
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
