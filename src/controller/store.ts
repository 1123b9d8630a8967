import { systemClock } from "../clock.js";
import { createDriftCheck } from "./sweeps/drift-check.js";
import { createPromotionBranchSweep } from "./sweeps/promotion-branch.js";
import { controllerHandlers } from "./http/serve-http.js";
import { createSync, startTriggers } from "./source/triggers.js";
import type { Controller, ControllerOptions } from "./controller-types.js";
import type { HttpHandlers } from "./http/http-server.js";
import type { Registry } from "prom-client";
import type { ObjectStatus } from "../status/status-types.js";
import { stopController } from "./shutdown.js";
import { systemTimers } from "./queue/work-queue.js";
import { statusReader } from "./http/status-view.js";
import { errorMessage } from "./error-message.js";
import { startupSweep } from "./sweeps/startup-sweep.js";
import {
  createStoreServices,
  createStoreWork,
  openStoreRecords,
  type StoreRecords,
  type StoreServices,
  type StoreState,
  type StoreWork,
  type StoreShared,
  type Undo,
} from "./store-parts.js";

// One status store's reconciler: the state lock, the status book, the API clients and their rate
// budget, the work queue, the snapshot scanner and the drift check (built in store-parts.ts). Without environments the
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
  /** The checkout moved: the records git now tracks in its store are said (status-book.ts). */
  checkTracked: () => Promise<void>;
};

export async function startStore(options: ControllerOptions, shared: StoreShared): Promise<Store> {
  const state: StoreState = { stopping: false, starting: true, scanDone: false };
  const started: Undo = [];
  try {
    const records = await openStoreRecords(options, shared, started);
    const services = createStoreServices(options, shared, records, {
      invalidFiles: () => work.scanner.snapshot().invalid.size,
      queue: () => work.queue.stats(),
    });
    const work = createStoreWork(options, shared, records, services, state, started);
    const serving = serveStore(options, shared, records, services, work, state);
    const parts = { records, services, work, serving, state };
    const triggers = await startFirstScan(options, shared, parts, started);
    return storeHandle(options, shared, { ...parts, triggers });
  } catch (error) {
    state.stopping = true;
    for (const undo of started.reverse()) await undo().catch(() => undefined);
    throw error;
  }
}

type Serving = ReturnType<typeof serveStore>;

/** The drift check, the sync, /status and the HTTP handlers (served here in single mode). */
function serveStore(
  options: ControllerOptions,
  { source, http, environment }: StoreShared,
  { book, activity, pageEvents }: StoreRecords,
  services: StoreServices,
  { queue, scanner }: StoreWork,
  state: StoreState,
) {
  const { metrics, listing, readiness, controlPlane, platform, notifier, requests, budget } = services;
  const clock = options.clock ?? systemClock;
  const log = options.logger;
  const sync = createSync({
    ...{ source, scan: scanner.scan, metrics, log },
    newCommit: book.checkTracked,
    // (told to stop: the signal comes first, and ends a fetch under way: stoppable-git.ts)
    stopping: () => state.stopping || options.signal?.aborted === true,
  });
  const working = () => !state.stopping && readiness.settled();
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
    writeBack: {
      source,
      statuses: book.statuses,
      readers: { controlPlane, platform },
      redactor: services.ports.redactor,
      environment: environment?.name,
    },
    writing: working,
    promote: environment?.promotion
      ? createPromotionBranchSweep({ ...environment.promotion, notifier, log })
      : undefined,
    log,
  });
  // Ready once the manifests are loaded: the control plane's health is in metrics and /status.
  const ready = readiness.ready;
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
  return { sync, checkDrift, status, handlers, schedule };
}

type Triggers = { stop: () => Promise<void>; nextDriftCheck: () => Date | null };

type StoreParts = {
  records: StoreRecords;
  services: StoreServices;
  work: StoreWork;
  serving: Serving;
  triggers: Triggers;
  state: StoreState;
};

/**
 * The triggers, then the first scan, then the startup sweep in the background: it queues every
 * object against one streamed listing of live (stop closes the listing it may wait on).
 */
async function startFirstScan(
  options: ControllerOptions,
  { source, environment }: StoreShared,
  parts: Omit<StoreParts, "triggers">,
  started: Undo,
): Promise<Triggers> {
  const { records, services, work, serving, state } = parts;
  const { listing, readiness } = services;
  const { queue, scanner } = work;
  const { sync, checkDrift, schedule } = serving;
  const log = options.logger;
  started.push(() => scanner.settled());
  // Watching before the first scan: a save between the two is rescanned, not lost (scans run one
  // at a time); a scheduled drift check waits for the first scan's snapshot.
  const triggers = environment
    ? { stop: async () => undefined, nextDriftCheck: environment.nextDriftCheck }
    : await startTriggers({
        source,
        intervalMs: options.source.kind === "git" ? options.source.intervalMs : undefined,
        debounceMs: options.debounceMs,
        driftSchedule: options.driftSchedule,
        scan: scanner.scan,
        sync,
        checkDrift: () => (state.starting ? Promise.resolve() : checkDrift()),
        timers: options.timers ?? systemTimers,
        log,
      });
  started.push(() => triggers.stop());
  await scanner.scan("start");
  state.starting = false;
  state.scanDone = true;
  void startupSweep({
    snapshot: scanner.snapshot,
    statuses: records.book.statuses,
    listing,
    enqueue: (key) => queue.enqueue(key, "change"),
    stopping: () => state.stopping,
    log,
  }).catch((error: unknown) => log.error({ err: errorMessage(error) }, "startup reconcile failed"));
  schedule.nextDriftCheck = () => triggers.nextDriftCheck();
  const objects = scanner.snapshot().objects.size; // ready (/readyz 200): loaded and watched
  log.info({ objects, settled: readiness.scanned() }, "manifests loaded: ready");
  return triggers;
}

/** The store as its controller sees it: what it serves, and its stop. */
function storeHandle(options: ControllerOptions, shared: StoreShared, parts: StoreParts): Store {
  const { records, services, work, serving, triggers, state } = parts;
  const { lock, book } = records;
  const { scanner, queue, loader } = work;
  const { http, environment, source } = shared;
  const log = options.logger;
  return {
    url: http?.url,
    handlers: environment ? serving.handlers : undefined,
    scan: scanner.scan,
    loaded: () => state.scanDone,
    registry: services.metrics.registry,
    statuses: book.statuses,
    scanned: (trigger, result) => services.metrics.scanned(trigger, result),
    checkTracked: book.checkTracked,
    manifestRoot: source.manifestRoot,
    ready: services.readiness.settled,
    status: serving.status,
    lockLost: lock.lost,
    rescan: () => scanner.scan("manual"),
    sync: () => serving.sync("manual"),
    checkDrift: serving.checkDrift,
    async stop(graceMs = 10_000) {
      if (state.stopping) return;
      state.stopping = true;
      services.listing.close(); // a startup or drift sweep waiting for the queue to take its listing ends
      await stopController({
        ...{ graceMs, log, triggers, scanner, queue, book, lock, http },
        leased: records.location.statusBranch !== undefined,
        gitStop: records.location.gitStop,
        source: environment ? { close: async () => undefined } : source, // the source is shared
      });
      await loader.close();
      // Notifications of the last reconciles get a moment; a dead receiver does not hold shutdown.
      await services.notifier?.drain(2_000);
    },
  };
}
