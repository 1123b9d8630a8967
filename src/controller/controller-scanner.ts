import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { loadManifests } from "../manifest/load.js";
import { maxManifestBytesFrom } from "../manifest/parse.js";
import type { ControllerOptions } from "./controller-types.js";
import type { ManifestSource } from "./manifest-source.js";
import { type ManifestThread, startManifestThread } from "./manifest-thread.js";
import type { ControllerMetrics } from "./metrics.js";
import type { Notifier } from "./notifier.js";
import { createPruneSweep, type PruneSweepDeps } from "./prune-sweep.js";
import { createSnapshotScanner, type SnapshotScanner } from "./snapshot-scanner.js";
import type { StatusBook } from "./status-book.js";

// The controller's snapshot scanner: manifests parsed on a worker thread (a hostile file never
// stalls health probes or reconciles), and after each scan, with --prune, the prune sweep.

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
    log: Logger;
  },
): { scanner: SnapshotScanner; thread: ManifestThread | undefined } {
  const { book, clock, log, notifier } = deps;
  const maxBytes = maxManifestBytesFrom(options.env);
  const thread = startManifestThread(maxBytes);
  const scanner = createSnapshotScanner({
    root: deps.source.manifestRoot,
    load: (root) => thread?.load(root) ?? loadManifests(root, { maxBytes }),
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
  return { scanner, thread };
}
