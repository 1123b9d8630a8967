import type { Registry } from "prom-client";
import type { EventStreams } from "../event-streams.js";
import type { PageRoutes } from "../page-routes.js";
import type { createWebhookGuard, WebhookVerdict } from "../../source/webhook.js";

// What answers the controller's requests (swapped by use()), and what the listening server keeps.

export type HttpHandlers = {
  ready(): boolean;
  /** More of /readyz's 200 body (with environments: the role of each). */
  readyBody?(): Record<string, unknown>;
  registry: Pick<Registry, "metrics" | "contentType">;
  status(): unknown;
  /** GET /status's JSON text in pieces, sent as the socket takes them (instead of status() whole). */
  statusPieces?(): Iterable<string>;
  /** Shared webhook secret; undefined disables POST /hooks/git (404). */
  webhookSecret: string | undefined;
  /** Called for a correctly signed webhook delivery. */
  onWebhook(): void;
  /** Called for a refused delivery: bad signature, dated too long ago, or seen before (metric, log). */
  onBadWebhook?(reason: Extract<WebhookVerdict, { ok: false }>["reason"]): void;
  /** When set, GET /status needs `Authorization: Bearer <token>` (PLUMB_STATUS_TOKEN). */
  statusToken?: string | undefined;
  /** Body of /readyz when not ready (why: starting, standby, API down). */
  notReady?(): Record<string, unknown>;
  /** The status page at / (its data behind the status token); absent on a standby. */
  page?: PageRoutes | undefined;
};

/** What one listening server keeps whichever handlers answer: open event streams, seen deliveries. */
export type ServerState = { streams: EventStreams; webhook: ReturnType<typeof createWebhookGuard> };
