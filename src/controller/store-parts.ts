import { systemClock } from "../clock.js";
import { legacyStatusLocation, resolveStatusDir, type StatusLocation } from "../git/status/status-source.js";
import { DEFAULT_API_KEY_CATEGORY } from "../api/transport/rate-limiter.js";
import type { StateLock } from "../lock/index.js";
import { createControllerClients } from "./api-clients.js";
import type { ControllerOptions } from "./controller-types.js";
import { createActivityBook, type ActivityBook } from "./http/activity-book.js";
import { createControllerMetrics } from "./http/metrics.js";
import { createPageEvents, type PageEvents } from "./http/page-events.js";
import { createRequestWindow } from "./http/request-window.js";
import { waitToLead } from "./leadership.js";
import { startControllerNotifier } from "./notify/start-notifier.js";
import { createControllerWorker } from "./queue/worker-context.js";
import { startWorkQueue, systemTimers, type WorkQueue } from "./queue/work-queue.js";
import { createReadiness } from "./readiness.js";
import { createControllerScanner } from "./snapshot/sliced-scanner.js";
import type { SnapshotScanner } from "./snapshot/snapshot-scanner.js";
import { openStatusBook, type StatusBook } from "./status-book.js";
import { displacedRecords } from "./displaced-records.js";
import { createLiveListing } from "./sweeps/live-listing.js";
import type { AutoPromotionDeps } from "../promote/auto-promotion.js";
import type { ManifestSource } from "./source/manifest-source.js";
import type { ControllerHttp } from "./http/http-server.js";
import type { LoadResult } from "../manifest/load.js";

// The parts of one store's reconciler (store.ts), in the order startStore builds them: its records
// (state lock, status book, page activity), its services (metrics, notifications, API clients and
// the live listing), and its work (the queue and the snapshot scanner feeding it).

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

/** What to undo, newest first, when startup fails half-way (and what stop waits for). */
export type Undo = Array<() => Promise<unknown>>;

/** startStore's flags, shared by its parts. */
export type StoreState = { stopping: boolean; starting: boolean; scanDone: boolean };

export type StoreRecords = {
  location: StatusLocation;
  lock: StateLock;
  activity: ActivityBook;
  pageEvents: PageEvents;
  book: StatusBook;
};

/** The state lock (waited for as a standby unless the caller holds it), the status book and the page's activity. */
export async function openStoreRecords(
  options: ControllerOptions,
  { source, http, environment, lock: held }: StoreShared,
  started: Undo,
): Promise<StoreRecords> {
  const timers = options.timers ?? systemTimers;
  const log = options.logger;
  // Status lives beside the manifests (--path), where plan, apply and drift look (docs/status.md).
  const location: StatusLocation = environment?.location ?? {
    root: source.manifestRoot,
    statusDir: options.statusDir,
    statusBranch: options.statusBranch,
    gitEnv: source.gitEnv, // the status branch is pushed with the same credentials as fetches
    gitStop: source.gitStop, // its pushes and the lease's end with the controller's stop
    gitQueue: source.gitQueue, // and its fetch takes turns with the poll's in the checkout
  };
  // One leader per status store: a second controller waits here as a standby.
  const lock =
    held ??
    (await waitToLead({
      location,
      http,
      statusToken: options.statusToken,
      leaseMs: options.lockLeaseMs,
      log,
      signal: options.signal,
      // A standby's checkout is as old as its start: the newest commit first (leadership.ts).
      catchUp: source.fetch,
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
    // A git checkout's store: its records whose paths a commit takes are kept in its git directory.
    displaced:
      source.kind === "git"
        ? await displacedRecords(source.repoRoot, resolveStatusDir(location), log)
        : undefined,
  });
  started.push(() => book.flush());
  return { location, lock, activity, pageEvents, book };
}

export type StoreServices = ReturnType<typeof createStoreServices>;

/** Metrics, notifications, the API clients with their rate budget, the live listing and readiness. */
export function createStoreServices(
  options: ControllerOptions,
  shared: StoreShared,
  { lock, book, location }: StoreRecords,
  work: { invalidFiles: () => number; queue: () => ReturnType<WorkQueue["stats"]> },
) {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const readiness = createReadiness();
  const metrics = createControllerMetrics({
    statuses: () => book.statuses.values(),
    invalidFiles: work.invalidFiles,
    queue: work.queue,
    settled: readiness.settled,
  });
  const notifier = startControllerNotifier({
    notify: options.notify,
    pageUrl: () => shared.http?.url ?? shared.environment?.pageUrl(),
    lockLost: lock.lost,
    gitStop: location.gitStop, // a lease lapsed at the stop, the remote silent, is no lock lost
    environment: shared.environment?.name,
    metrics,
    timers,
    log: options.logger,
    fetch: options.fetch,
  });
  const budget = options.apiRateLimit ?? DEFAULT_API_KEY_CATEGORY;
  const requests = createRequestWindow(budget.windowMs);
  const clients = createControllerClients({
    api: options.api,
    clock,
    onResponse: (e) => {
      metrics.onResponse(e);
      requests.sent(clock.now());
    },
    fetch: options.fetch,
    rateLimit: options.apiRateLimit,
    beforeWrite: lock.assertHeld, // checked after the limiter's and retries' waits
    logger: options.logger,
  });
  const listing = createLiveListing(() => clients.controlPlane.deploymentPages(), options.logger, timers);
  metrics.leading(true);
  return { metrics, notifier, budget, requests, ...clients, listing, readiness };
}

export type StoreWork = {
  queue: WorkQueue;
  scanner: SnapshotScanner;
  loader: { close: () => Promise<void> };
};

/**
 * The work queue and the snapshot scanner feeding it. Both do nothing until the first scan; the
 * objects it finds are queued by the startup sweep (startup-sweep.ts) once it is done, against one
 * streamed listing of live. Later changes look up afresh.
 */
export function createStoreWork(
  options: ControllerOptions,
  shared: StoreShared,
  { location, lock, activity, book }: StoreRecords,
  services: StoreServices,
  state: StoreState,
  started: Undo,
): StoreWork {
  const { metrics, notifier, listing, readiness, controlPlane, ports, platform } = services;
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const log = options.logger;
  const queue = startWorkQueue({
    concurrency: options.concurrency,
    debounceMs: 0, // file events are debounced before the rescan
    backoffBaseMs: options.backoffBaseMs,
    backoffMaxMs: options.backoffMaxMs,
    timers,
    worker: createControllerWorker(options, {
      ...{ source: shared.source, clients: { ports, platform }, book, listing, metrics, activity, notifier },
      snapshot: () => scanner.snapshot(),
      failures: (key) => queue.failures(key),
      settled: (key) => {
        if (readiness.settle(key))
          log.info({ objects: scanner.snapshot().objects.size }, "first reconcile finished");
      },
      clock,
      log,
    }),
  });
  started.push(() => queue.stop(1_000));
  const { scanner, loader } = createControllerScanner(options, {
    ...{
      source: shared.source,
      load: shared.environment?.load,
      book,
      fence: lock.assertHeld,
      activity,
      controlPlane,
      notifier,
      metrics,
    },
    statusDir: resolveStatusDir(location),
    changed(key) {
      listing.forget(key);
      if (state.starting)
        readiness.expect(key); // queued by the startup sweep
      else queue.enqueue(key, "change");
    },
    removed: (key) => {
      queue.cancel(key);
      listing.forget(key);
    },
    stopping: () => state.stopping,
    clock,
    timers,
    log,
  });
  started.push(() => loader.close());
  return { queue, scanner, loader };
}
