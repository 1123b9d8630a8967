import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { type LoadResult, loadManifests } from "../../manifest/load.js";
import type { ObjectStatus } from "../../status/status-types.js";
import { coalesce } from "../queue/coalesce.js";
import { compactLoaded } from "./compact-manifest.js";
import { buildSnapshot, type DesiredSnapshot, emptySnapshot } from "./desired.js";
import { errorMessage } from "../error-message.js";
import type { ControllerMetrics } from "../http/metrics.js";
import { planScan } from "./scan-changes.js";
import { secretFilesOf } from "../../manifest/source/source-tree.js";
import { digestSourceContents } from "../source/source-contents.js";
import type { ReadAtRest } from "./read-at-rest.js";

// Holds what the manifests say (the snapshot) and rescans them: load (and digest internal_source
// directories), compare with the previous
// snapshot, queue what changed, drop what disappeared. Rescans run one at a time (coalesce.ts).

export type ScannerDeps = {
  root: string;
  clock: Clock;
  log: Logger;
  metrics: Pick<ControllerMetrics, "scanned">;
  statuses: ReadonlyMap<string, ObjectStatus>;
  record: (status: ObjectStatus) => Promise<void>;
  /** A new or edited object: queue its reconcile. */
  changed: (key: string) => void;
  /** An object gone from the manifests (or now invalid): drop its queued work. */
  removed: (key: string) => void;
  commit: () => string | null;
  stopping: () => boolean;
  load?: (root: string) => Promise<LoadResult>;
  /** A directory: reads used only once their files are at rest (read-at-rest.ts). */
  atRest?: ReadAtRest | undefined;
  /** After each scan that read the manifests (prune-sweep.ts). */
  afterScan?: (snapshot: DesiredSnapshot) => Promise<void>;
};

export type SnapshotScanner = {
  snapshot: () => DesiredSnapshot;
  /** Rescans now (`source` labels the metric: start, watch, poll, webhook, manual). */
  scan: (source: string) => Promise<void>;
  /** Resolves when no scan is running. */
  settled: () => Promise<void>;
};

/** Every problem of every invalid file, one log line each: repeated until fixed. */
export function logInvalid(log: Logger, snapshot: DesiredSnapshot): void {
  for (const [file, problems] of snapshot.invalid)
    for (const p of problems)
      log.error(
        { file, line: p.line, column: p.column, code: p.code, field: p.field, problem: p.message },
        "invalid manifest: not reconciled until fixed",
      );
}

export function createSnapshotScanner(deps: ScannerDeps): SnapshotScanner {
  const { log } = deps;
  const load = deps.load ?? loadManifests;
  let snapshot = emptySnapshot();

  const scanOnce = async (source: string) => {
    let next: DesiredSnapshot;
    try {
      const read = async () => {
        const result = await load(deps.root);
        const manifests = result.manifests.map((loaded) => compactLoaded(loaded, deps.root));
        // Every manifest's secret files stay out of every upload (and its digest).
        const secretFiles = await secretFilesOf(manifests, deps.root);
        const sources = await digestSourceContents(manifests, deps.root, secretFiles);
        return { ...result, manifests, secretFiles, contents: sources.contents, alsoRead: sources.files };
      };
      const loaded = deps.atRest
        ? await deps.atRest.load(read, (files, waitMs) => {
            deps.metrics.scanned(source, "deferred");
            log.debug({ files, wait_ms: waitMs }, "files changed within the settle time: read again");
          })
        : await read();
      if (deps.stopping()) return;
      const { manifests, problems, environments, elsewhere, contents, secretFiles } = loaded;
      const result = { manifests, problems, environments, ...(elsewhere ? { elsewhere } : {}) };
      next = { ...buildSnapshot(result, contents), secretFiles };
    } catch (error) {
      deps.metrics.scanned(source, "error");
      log.error({ err: errorMessage(error) }, "cannot read the manifests");
      return;
    }
    const outcome = planScan(snapshot, next, deps.statuses, deps.clock.now());
    snapshot = next;
    deps.metrics.scanned(source, next.invalid.size > 0 ? "invalid" : "ok");
    if (outcome.reportProblems) logInvalid(log, next);
    for (const { key, invalid, record } of outcome.removed) {
      deps.removed(key);
      if (record) await deps.record(record); // its manifest broke: its status says so until fixed
      log.info(
        { object: key },
        invalid ? "manifest now invalid: not reconciled" : "manifest removed: no longer reconciled",
      );
    }
    for (const key of outcome.changed) deps.changed(key);
    await deps
      .afterScan?.(next)
      .catch((error: unknown) => log.error({ err: errorMessage(error) }, "after-scan step failed"));
    if (outcome.changed.length > 0)
      log.info(
        { changed: outcome.changed.length, trigger: source, revision: deps.commit() },
        "manifests changed",
      );
  };

  const runner = coalesce(scanOnce, () => !deps.stopping());
  return { snapshot: () => snapshot, scan: (source) => runner.run(source), settled: runner.settled };
}
