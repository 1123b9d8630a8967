import { Cron } from "croner";
import type { Logger } from "../../logger.js";
import { watchDirectory } from "./directory-source.js";
import { errorMessage } from "../error-message.js";
import { createFileDebounce } from "./file-debounce.js";
import type { HttpHandlers } from "../http/http-server.js";
import type { ManifestSource } from "./manifest-source.js";
import type { ControllerMetrics } from "../http/metrics.js";
import type { PageRoutes } from "../http/page-routes.js";
import type { Timers } from "../queue/work-queue.js";

// What makes the controller look again: file events (debounced), git polling, the signed webhook
// and the drift schedule. Each only calls sync or the drift sweep; none reconciles by itself.

/** Fetch (git) and rescan when the commit moved; for a directory just rescan. Errors are logged. */
export function createSync(deps: {
  source: Pick<ManifestSource, "fetch" | "commit">;
  scan: (trigger: string) => Promise<void>;
  /** After a fetch that moved the commit, before its scan (the status books' checkTracked). */
  newCommit?: () => Promise<void>;
  metrics: Pick<ControllerMetrics, "scanned">;
  log: Logger;
  stopping: () => boolean;
}): (trigger: string) => Promise<void> {
  return async (trigger) => {
    if (deps.stopping()) return;
    if (!deps.source.fetch) return deps.scan(trigger);
    try {
      if (await deps.source.fetch()) {
        deps.log.info({ revision: deps.source.commit(), trigger }, "new commit");
        await deps.newCommit?.();
        await deps.scan(trigger);
      }
    } catch (error) {
      if (deps.stopping()) return; // the fetch was ended by the stop (stoppable-git.ts): no failure
      deps.metrics.scanned(trigger, "error");
      deps.log.error({ err: errorMessage(error), trigger }, "git fetch failed");
    }
  };
}

export type TriggerOptions = {
  source: Pick<ManifestSource, "kind" | "manifestRoot">;
  /** git: how often to fetch. */
  intervalMs: number | undefined;
  /** File events less than this apart are a burst, rescanned once this long after the last. */
  debounceMs: number;
  driftSchedule: string | undefined;
  scan: (trigger: string) => Promise<void>;
  sync: (trigger: string) => Promise<void>;
  checkDrift: () => Promise<void>;
  timers: Timers;
  log: Logger;
};

/** Starts the watcher (ready when this resolves), the poll and the drift schedule. */
export async function startTriggers(
  options: TriggerOptions,
): Promise<{ stop(): Promise<void>; nextDriftCheck(): Date | null }> {
  const { log, timers } = options;
  const debounce = createFileDebounce({
    timers,
    quietMs: options.debounceMs,
    run: () => void options.scan("watch"),
  });
  const watcher =
    options.source.kind === "dir"
      ? watchDirectory(
          options.source.manifestRoot,
          () => debounce.event(),
          (error) => log.error({ err: error.message }, "file watcher error"),
        )
      : undefined;
  await watcher?.ready;
  const poll =
    options.source.kind === "git" && options.intervalMs !== undefined
      ? setInterval(() => void options.sync("poll"), options.intervalMs).unref()
      : undefined;
  const cron = options.driftSchedule
    ? new Cron(options.driftSchedule, { protect: true }, () => options.checkDrift())
    : undefined;
  return {
    nextDriftCheck: () => cron?.nextRun() ?? null,
    async stop() {
      cron?.stop();
      if (poll) clearInterval(poll);
      debounce.cancel();
      await watcher?.close();
    },
  };
}

/** The leader's /livez /readyz /metrics /status, and POST /hooks/git that fetches at once. */
export function httpHandlers(options: {
  ready: () => boolean;
  notReady?: () => Record<string, unknown>;
  status: () => unknown;
  statusPieces?: (() => Iterable<string>) | undefined;
  statusToken?: string | undefined;
  webhookSecret: string | undefined;
  sync: (trigger: string) => Promise<void>;
  metrics: Pick<ControllerMetrics, "registry" | "scanned">;
  page: PageRoutes;
  log: Logger;
}): HttpHandlers {
  const { log, metrics } = options;
  return {
    ready: options.ready,
    notReady: options.notReady,
    registry: metrics.registry,
    status: options.status,
    statusPieces: options.statusPieces,
    statusToken: options.statusToken,
    webhookSecret: options.webhookSecret,
    page: options.page,
    onWebhook: () => {
      log.info({}, "webhook received: fetching now");
      void options.sync("webhook");
    },
    onBadWebhook: (reason) => {
      metrics.scanned("webhook", "error");
      log.warn({ reason }, "webhook rejected"); // signature, stale or replayed
    },
  };
}
