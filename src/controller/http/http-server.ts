import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Registry } from "prom-client";
import { PlumbError } from "../../errors.js";
import { createEventStreams, type EventStreams } from "./event-streams.js";
import { createHostCheck } from "./host-check.js";
import { type PageRoutes, servePageAsset, servePageData } from "./page-routes.js";
import {
  createWebhookGuard,
  mayBeSigned,
  type WebhookDigest,
  type WebhookVerdict,
  webhookDigest,
} from "../source/webhook.js";

// The controller's HTTP face: probes, metrics, status, the status page and the git webhook.
// node:http keeps it small.

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

export type ControllerHttp = {
  url: string;
  close(): Promise<void>;
  /** Answers with these handlers from now on (starting → standby → leader, one listening socket). */
  use(handlers: HttpHandlers): void;
};

/**
 * --listen, and the names the controller answers besides it (host-check.ts); `maxConnections` and
 * `maxConnectionsPerClient` (tests) replace MAX_CONNECTIONS and MAX_CONNECTIONS_PER_CLIENT.
 */
export type Listen = {
  host: string;
  port: number;
  allowedHosts?: readonly string[] | undefined;
  maxConnections?: number | undefined;
  maxConnectionsPerClient?: number | undefined;
};

/** What one listening server keeps whichever handlers answer: open event streams, seen deliveries. */
type ServerState = { streams: EventStreams; webhook: ReturnType<typeof createWebhookGuard> };

const MAX_WEBHOOK_BYTES = 1024 * 1024;
/**
 * Connections open at once; one more is closed unanswered as it arrives (Node's maxConnections). A
 * status page takes a few (its event stream, at most 100 of them, and its fetches), a probe one.
 */
export const MAX_CONNECTIONS = 256;
/**
 * Connections one client address may hold at once: one more from it is closed unanswered as it
 * arrives. A single client filling all MAX_CONNECTIONS would starve the kubelet's probes (a
 * liveness failure, then a restart) and every other viewer; now a quarter is always left for the
 * others. Behind an ingress every viewer shares its address, so the share stays large: the page's
 * 100 event streams and their fetches fit through one.
 */
export const MAX_CONNECTIONS_PER_CLIENT = 192;

/** Closes, as it arrives, a connection from an address that already holds `max` open. */
function limitPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const client = socket.remoteAddress ?? "";
    const count = (open.get(client) ?? 0) + 1;
    if (count > max) return void socket.destroy();
    open.set(client, count);
    socket.once("close", () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
  });
}

/** `127.0.0.1:9400`, `:9400`, `9400` → host and port. */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535)
    throw new PlumbError("usage", `--listen expects HOST:PORT, e.g. 127.0.0.1:9400; got "${text}"`, {
      exitCode: 64,
    });
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1") || "0.0.0.0";
  return { host, port };
}

const send = (res: ServerResponse, code: number, body: unknown, type = "application/json") => {
  const text = type === "application/json" ? `${JSON.stringify(body)}\n` : String(body);
  res.writeHead(code, { "content-type": type, "cache-control": "no-store" });
  res.end(text);
};

/** A long JSON body written piece by piece, each once the socket took the one before. */
async function sendPieces(res: ServerResponse, pieces: Iterable<string>): Promise<void> {
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  for (const piece of pieces) {
    if (res.destroyed) return; // the client went away: the rest is never made
    if (!res.write(piece)) await drainedOrClosed(res);
  }
  res.end();
}

const drainedOrClosed = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });

/**
 * Feeds the body to `digest` as it arrives, keeping none of it; false once it passes the limit,
 * the rest left unread (the answer closes the connection: carriesBody). The request is not
 * destroyed on the way out, which could cut the connection before the 413 is written.
 */
async function digestBody(req: IncomingMessage, digest: WebhookDigest): Promise<boolean> {
  if (Number(req.headers["content-length"]) > MAX_WEBHOOK_BYTES) return false; // said up front
  let size = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > MAX_WEBHOOK_BYTES) return false;
    digest.update(chunk as Buffer);
  }
  return true;
}

/** The request says a body follows (Content-Length above 0, or Transfer-Encoding). */
const carriesBody = (req: IncomingMessage): boolean =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;

async function handle(
  h: HttpHandlers,
  req: IncomingMessage,
  res: ServerResponse,
  server: ServerState,
): Promise<void> {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const method = req.method ?? "GET";
  if (path === "/hooks/git") {
    if (method !== "POST") return send(res, 405, { detail: "use POST" });
    if (!h.webhookSecret) return send(res, 404, { detail: "webhook not configured (--webhook-secret-file)" });
    if (!mayBeSigned(req.headers)) {
      h.onBadWebhook?.("signature");
      return send(res, 401, { detail: "invalid signature" });
    }
    const digest = webhookDigest(h.webhookSecret, req.headers);
    if (!(await digestBody(req, digest))) return send(res, 413, { detail: "payload too large" });
    res.removeHeader("connection"); // the body was read to its end: the connection may serve another
    const verdict = server.webhook(h.webhookSecret, req.headers, digest);
    if (!verdict.ok) {
      h.onBadWebhook?.(verdict.reason);
      return send(res, verdict.status, { detail: verdict.detail });
    }
    h.onWebhook();
    return send(res, 202, { accepted: true });
  }
  if (method !== "GET" && method !== "HEAD") return send(res, 405, { detail: "use GET" });
  if (h.page && servePageAsset(path, res)) return;
  if (h.page && (path === "/ui/events" || path.startsWith("/ui/api/"))) {
    if (!authorized(h, req, res)) return;
    if (await servePageData(h.page, path, req, res, send, server.streams)) return;
  }
  switch (path) {
    case "/livez": // the process answers: its event loop turns (nothing else: a restart would not help)
    case "/healthz": // the older name, kept
      return send(res, 200, { ok: true });
    case "/readyz":
      return h.ready()
        ? send(res, 200, { ready: true, ...h.readyBody?.() })
        : send(res, 503, { ready: false, ...h.notReady?.() });
    case "/metrics":
      return send(res, 200, await h.registry.metrics(), h.registry.contentType);
    case "/status":
      if (!authorized(h, req, res)) return;
      return h.statusPieces ? sendPieces(res, h.statusPieces()) : send(res, 200, h.status());
    default:
      return send(res, 404, { detail: "not found" });
  }
}

/** With a status token set, answers 401 (and returns false) unless the request carries it. */
function authorized(h: HttpHandlers, req: IncomingMessage, res: ServerResponse): boolean {
  if (!h.statusToken || bearerMatches(req.headers.authorization, h.statusToken)) return true;
  res.setHeader("www-authenticate", 'Bearer realm="plumb"');
  send(res, 401, { detail: "send Authorization: Bearer <PLUMB_STATUS_TOKEN>" });
  return false;
}

/** Constant-time comparison of digests, so the answer time says nothing about the token. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1]?.trim() ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

export async function startControllerHttp(listen: Listen, handlers: HttpHandlers): Promise<ControllerHttp> {
  let current = handlers;
  const state: ServerState = { streams: createEventStreams(), webhook: createWebhookGuard() };
  // A DNS-rebinding page names a host the controller was not told about: 421, nothing served.
  const hostAllowed = createHostCheck(listen.host, listen.allowedHosts);
  const server = createServer((req, res) => {
    // Whatever answers a request whose body is left unread (a refusal before it, a 413 part-way,
    // any route but the webhook) closes the connection once written: Node would otherwise read and
    // drop the rest of the body, however long, to keep the connection for another request.
    if (carriesBody(req)) res.setHeader("connection", "close");
    if (!hostAllowed(req.headers.host))
      return send(res, 421, {
        detail: "this Host is not one the controller answers: add it with --allowed-host",
      });
    handle(current, req, res, state).catch(() => {
      if (!res.headersSent) send(res, 500, { detail: "internal error" });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.maxConnections = listen.maxConnections ?? MAX_CONNECTIONS;
  limitPerClient(server, listen.maxConnectionsPerClient ?? MAX_CONNECTIONS_PER_CLIENT);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new PlumbError(
          "listen-failed",
          `cannot listen on ${listen.host}:${listen.port} (${error.code ?? error.message}); pick another --listen`,
        ),
      ),
    );
    server.listen(listen.port, listen.host, resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    use: (next) => {
      current = next;
      state.streams.endAll(); // each page reconnects to the new handlers' events
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
