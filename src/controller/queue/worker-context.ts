import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { agentUrlFallback } from "../../reconcile/session.js";
import type { ActivityBook } from "../http/activity-book.js";
import { tokensOf } from "../../api/secret-redactor.js";
import type { createControllerClients } from "../api-clients.js";
import type { ControllerOptions } from "../controller-types.js";
import type { DesiredSnapshot } from "../snapshot/desired.js";
import type { LiveListing } from "../sweeps/live-listing.js";
import type { ManifestSource } from "../source/manifest-source.js";
import type { ControllerMetrics } from "../http/metrics.js";
import type { Notifier } from "../notify/notifier.js";
import { createReconcileWorker } from "./reconcile-worker.js";
import type { StatusBook } from "../status-book.js";
import type { Worker } from "./work-queue.js";

// The work queue's worker as the controller runs it: the reconcile context (clients, status book,
// the installation's create rules, a bound on scrypt checks) built from the controller's options.

export function createControllerWorker(
  options: Pick<
    ControllerOptions,
    | "env"
    | "selfHeal"
    | "timeoutMs"
    | "pollIntervalMs"
    | "maxPollIntervalMs"
    | "api"
    | "statusToken"
    | "webhookSecret"
    | "notify"
  >,
  deps: {
    source: ManifestSource;
    clients: Pick<ReturnType<typeof createControllerClients>, "ports" | "platform">;
    book: StatusBook;
    snapshot: () => DesiredSnapshot;
    listing: LiveListing;
    metrics: ControllerMetrics;
    failures: (key: string) => number;
    activity: ActivityBook;
    notifier: Notifier | undefined;
    settled: (key: string) => void;
    clock: Clock;
    log: Logger;
  },
): Worker {
  const { ports, platform } = deps.clients;
  // The clients' redactor learns the tokens here and each secret value as a reconcile resolves it.
  const { redactor } = ports;
  redactor.add(tokensOf(options.env));
  redactor.add([options.statusToken, options.webhookSecret, options.notify?.secret]); // also read from files
  return createReconcileWorker({
    context: {
      root: deps.source.manifestRoot,
      env: options.env,
      redactor,
      clock: deps.clock,
      ports,
      platform,
      statuses: { get: deps.book.recorded },
      record: deps.book.record,
      forget: deps.book.forget,
      gitCommit: deps.source.commit,
      selfHeal: options.selfHeal,
      timeoutMs: options.timeoutMs,
      pollIntervalMs: options.pollIntervalMs,
      maxPollIntervalMs: options.maxPollIntervalMs,
      agentUrlFallback: agentUrlFallback(options.api.apiUrl),
      server: { client: ports.controlPlane, setting: options.api.mode, apiUrl: options.api.apiUrl },
      // As plan: leave a threadpool slot for file reads and DNS while reconciles check secrets.
      fingerprintLimit: pLimit(Math.max(1, Math.min(3, availableParallelism()))),
    },
    snapshot: deps.snapshot,
    listing: deps.listing,
    metrics: deps.metrics,
    failures: deps.failures,
    activity: deps.activity,
    notifier: deps.notifier,
    settled: deps.settled,
    clock: deps.clock,
    log: deps.log,
  });
}
