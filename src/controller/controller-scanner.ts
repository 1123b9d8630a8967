import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { maxManifestBytesFrom } from "../manifest/parse.js";
import type { ControllerOptions } from "./controller-types.js";
import type { ManifestSource } from "./manifest-source.js";
import { createManifestLoader, type ManifestLoader } from "./manifest-loader.js";
import type { ControllerMetrics } from "./metrics.js";
import type { Notifier } from "./notifier.js";
import { createPruneSweep, type PruneSweepDeps } from "./prune-sweep.js";
import { createSnapshotScanner, type SnapshotScanner } from "./snapshot-scanner.js";
import type { StatusBook } from "./status-book.js";
import type { Timers } from "./work-queue.js";

// The controller's snapshot scanner: manifests read in slices of its event loop (a tree with a
// large, possibly hostile file on a worker thread: manifest-loader.ts), and after each scan, with
// --prune, the prune sweep.

export function createControllerScanner(
  options: Pick<ControllerOptions, "env" | "prune" | "pruneMax" | "timeoutMs">,
  deps: {
    source: ManifestSource;
    book: StatusBook;
    controlPlane: PruneSweepDeps["port"];
    notifier: Notifier | undefined;
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
  const scanner = createSnapshotScanner({
    root: deps.source.manifestRoot,
    load: (root) => loader.load(root),
    afterScan: createPruneSweep({
      enabled: options.prune === true,
      max: options.pruneMax,
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
