import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { maxManifestBytesFrom } from "../../manifest/parse/parse.js";
import type { LoadResult } from "../../manifest/load.js";
import type { ControllerOptions } from "../controller-types.js";
import type { ManifestSource } from "../source/manifest-source.js";
import { createManifestLoader, type ManifestLoader } from "./manifest-loader.js";
import type { ControllerMetrics } from "../http/metrics.js";
import type { Notifier } from "../notify/notifier.js";
import { createPruneSweep, type PruneSweepDeps } from "../sweeps/prune-sweep.js";
import { createSnapshotScanner, type SnapshotScanner } from "./snapshot-scanner.js";
import { directoryReadAtRest } from "./read-at-rest.js";
import type { StatusBook } from "../status-book.js";
import type { Timers } from "../queue/work-queue.js";
import type { ActivityBook } from "../http/activity-book.js";
import { statusKey } from "../../status/status-types.js";

// The controller's snapshot scanner: manifests read in slices of its event loop (a tree with a
// large, possibly hostile file on a worker thread: manifest-loader.ts), and after each scan, with
// --prune, the prune sweep.

type ScannerOptions = Pick<
  ControllerOptions,
  "env" | "prune" | "pruneMax" | "pruneWindowMs" | "pruneDelayMs" | "timeoutMs" | "settleMs"
>;

type ScannerDeps = {
  source: ManifestSource;
  /** With environments: the environment's view of the tree (environments/environment-load.ts). */
  load?: ((root: string) => Promise<LoadResult>) | undefined;
  book: StatusBook;
  /** The state lock's fence: the prune sweep counts nothing once it is lost. */
  fence: PruneSweepDeps["fence"];
  controlPlane: PruneSweepDeps["port"];
  notifier: Notifier | undefined;
  /** The status directory (the prune ledger) and the status page's activity (prune-blocked). */
  statusDir: string;
  activity?: Pick<ActivityBook, "record">;
  metrics: ControllerMetrics;
  changed: (key: string) => void;
  removed: (key: string) => void;
  stopping: () => boolean;
  clock: Clock;
  timers: Timers;
  log: Logger;
};

export function createControllerScanner(
  options: ScannerOptions,
  deps: ScannerDeps,
): { scanner: SnapshotScanner; loader: Pick<ManifestLoader, "close"> } {
  const { book, clock, log } = deps;
  const loader = createManifestLoader(maxManifestBytesFrom(options.env), deps.timers);
  // A directory is written by anyone at any pace; a git checkout only by a finished reset.
  const atRest = directoryReadAtRest(deps.source, {
    settleMs: options.settleMs,
    log,
    stopping: deps.stopping,
  });
  let rescanning: (() => void) | undefined;
  const scanner: SnapshotScanner = createSnapshotScanner({
    root: deps.source.manifestRoot,
    load: deps.load ?? ((root) => loader.load(root)),
    atRest,
    afterScan: createScanPrune(options, deps, (ms) => {
      rescanning?.();
      rescanning = deps.timers.setTimeout(() => {
        rescanning = undefined;
        if (!deps.stopping()) void scanner.scan("prune-delay");
      }, ms);
    }),
    clock,
    log,
    metrics: deps.metrics,
    statuses: book.statuses,
    record: book.record,
    changed: deps.changed,
    removed: deps.removed,
    commit: deps.source.commit,
    stopping: deps.stopping,
  });
  const close = async () => {
    await loader.close();
    await atRest?.close();
  };
  return { scanner, loader: { close } };
}

/** The prune sweep after each scan (with --prune); `rescanAfter` asks for its second scan. */
function createScanPrune(options: ScannerOptions, deps: ScannerDeps, rescanAfter: (ms: number) => void) {
  const { book, notifier } = deps;
  return createPruneSweep({
    enabled: options.prune === true,
    max: options.pruneMax,
    windowMs: options.pruneWindowMs,
    delayMs: options.pruneDelayMs,
    root: deps.source.manifestRoot,
    statusDir: deps.statusDir,
    rescanAfter,
    blocked: (waiting, message) => reportPruneBlocked(deps, waiting, message),
    statuses: book.statuses,
    forget: book.forget,
    fence: deps.fence,
    port: deps.controlPlane,
    clock: deps.clock,
    timeoutMs: options.timeoutMs,
    log: deps.log,
    pruned: (name, id) =>
      notifier?.notify({
        event: "pruned",
        object: { kind: "Deployment", name },
        id,
        revision: null,
        fields: [],
        message: "deleted: its manifest was removed from git (--prune)",
      }),
  });
}

/** Prune over its budget: counted, notified, and shown on each waiting object's row of the page. */
function reportPruneBlocked(
  deps: ScannerDeps,
  waiting: ReadonlyArray<{ kind: string; name: string }>,
  message: string,
): void {
  deps.metrics.pruneBlocked();
  deps.notifier?.notify({
    event: "prune-blocked",
    object: null,
    id: null,
    revision: null,
    fields: [],
    message,
  });
  const at = new Date(deps.clock.now()).toISOString();
  for (const p of waiting)
    deps.activity?.record(statusKey(p.kind, p.name), {
      at,
      reason: "removed from git",
      result: "prune-blocked",
      action: "delete waits: over --prune-max per --prune-window",
      duration_ms: 0,
      drift_fields: [],
      plan: [],
    });
}
