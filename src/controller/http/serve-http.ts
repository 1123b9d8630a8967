import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import type { ControlPlaneClient } from "../../api/control-plane-client.js";
import type { ActivityBook } from "./activity-book.js";
import type { ControllerOptions } from "../controller-types.js";
import type { HttpHandlers } from "./http-server.js";
import type { ManifestSource } from "../source/manifest-source.js";
import type { ControllerMetrics } from "./metrics.js";
import type { PageEvents } from "./page-events.js";
import type { SnapshotScanner } from "../snapshot/snapshot-scanner.js";
import type { StatusBook } from "../status-book.js";
import { createStatusPageRoutes, type HeaderSources } from "./status-page-source.js";
import { httpHandlers } from "../source/triggers.js";

// The controller's HTTP side when --listen is given: the status page at /, the probes (with why
// it is not ready), /metrics, /status and the git webhook. The socket is bound before the clone
// (startup-http.ts); the leader takes it over with these handlers, before any reconcile (with
// environments, environments/environment-http.ts composes each environment's).

export function controllerHandlers(
  options: Pick<ControllerOptions, "source" | "api" | "statusToken" | "webhookSecret">,
  deps: {
    ready: () => boolean;
    metrics: ControllerMetrics;
    status: (() => unknown) & { pieces?: () => Iterable<string> };
    sync: (trigger: string) => Promise<void>;
    header: Pick<HeaderSources, "requests" | "budget" | "nextDriftCheck">;
    source: ManifestSource;
    scanner: Pick<SnapshotScanner, "snapshot">;
    book: Pick<StatusBook, "statuses">;
    queue: { stats: HeaderSources["queue"] };
    activity: ActivityBook;
    controlPlane: Pick<ControlPlaneClient, "listRevisions">;
    events: PageEvents;
    clock: Clock;
    log: Logger;
  },
): HttpHandlers {
  const { metrics } = deps;
  const page = createStatusPageRoutes({
    header: {
      ...deps.header,
      ready: deps.ready,
      source: deps.source,
      branch: options.source.kind === "git" ? options.source.branch : null,
      apiUrl: options.api.apiUrl,
      apiState: () => metrics.apiState(),
      queue: () => deps.queue.stats(),
    },
    snapshot: () => deps.scanner.snapshot(),
    statuses: deps.book.statuses,
    activity: deps.activity,
    controlPlane: deps.controlPlane,
    events: deps.events,
    clock: deps.clock,
  });
  return httpHandlers({
    ready: deps.ready,
    // Ready once the manifests are loaded; the control plane's health is in /metrics and /status.
    notReady: () => ({ reason: "loading the manifests" }),
    status: deps.status,
    statusPieces: deps.status.pieces,
    statusToken: options.statusToken,
    webhookSecret: options.webhookSecret,
    sync: deps.sync,
    metrics,
    page,
    log: deps.log,
  });
}
