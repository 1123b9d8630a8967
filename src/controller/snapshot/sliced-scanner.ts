import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { maxManifestBytesFrom } from "../../manifest/parse.js";
import type { LoadResult } from "../../manifest/load.js";
import type { ControllerOptions } from "../controller-types.js";
import type { ManifestSource } from "../source/manifest-source.js";
import { createManifestLoader, type ManifestLoader } from "./manifest-loader.js";
import type { ControllerMetrics } from "../http/metrics.js";
import type { Notifier } from "../notify/notifier.js";
import { createPruneSweep, type PruneSweepDeps } from "../sweeps/prune-sweep.js";
import { createSnapshotScanner, type SnapshotScanner } from "./snapshot-scanner.js";
import type { StatusBook } from "../status-book.js";
import type { Timers } from "../queue/work-queue.js";
import type { ActivityBook } from "../http/activity-book.js";
import { statusKey } from "../../status/status-types.js";

// The controller's snapshot scanner: manifests read in slices of its event loop (a tree with a
// large, possibly hostile file on a worker thread: manifest-loader.ts), and after each scan, with
// --prune, the prune sweep.

export function createControllerScanner(
  options: Pick<
    ControllerOptions,
    "env" | "prune" | "pruneMax" | "pruneWindowMs" | "pruneDelayMs" | "timeoutMs"
  >,
  deps: {
    source: ManifestSource;
    /** With environments: the environment's view of the tree (environments/environment-load.ts). */
    load?: ((root: string) => Promise<LoadResult>) | undefined;
    book: StatusBook;
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
  },
): { scanner: SnapshotScanner; loader: ManifestLoader } {
  const { book, clock, log, notifier } = deps;
  const maxBytes = maxManifestBytesFrom(options.env);
  const loader = createManifestLoader(maxBytes, deps.timers);
  let rescanning: (() => void) | undefined;
  const scanner: SnapshotScanner = createSnapshotScanner({
    root: deps.source.manifestRoot,
    load: deps.load ?? ((root) => loader.load(root)),
    afterScan: createPruneSweep({
      enabled: options.prune === true,
      max: options.pruneMax,
      windowMs: options.pruneWindowMs,
      delayMs: options.pruneDelayMs,
      root: deps.source.manifestRoot,
      statusDir: deps.statusDir,
      rescanAfter: (ms) => {
        rescanning?.();
        rescanning = deps.timers.setTimeout(() => {
          rescanning = undefined;
          if (!deps.stopping()) void scanner.scan("prune-delay");
        }, ms);
      },
      blocked: (waiting, message) => {
        deps.metrics.pruneBlocked();
        notifier?.notify({
          event: "prune-blocked",
          object: null,
          id: null,
          revision: null,
          fields: [],
          message,
        });
        const at = new Date(clock.now()).toISOString();
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
      },
      statuses: book.statuses,
      forget: book.forget,
      port: deps.controlPlane,
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
    metrics: deps.metrics,
    statuses: book.statuses,
    record: book.record,
    changed: deps.changed,
    removed: deps.removed,
    commit: deps.source.commit,
    stopping: deps.stopping,
  });
  return { scanner, loader };
}
