import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { servePageAsset, servePageData } from "../page-routes.js";
import { mayBeSigned, webhookDigest } from "../../source/webhook.js";
import type { HttpHandlers, ServerState } from "./http-handlers.js";
import { digestBody } from "./request-body.js";
import { send, sendPieces } from "./responses.js";

// One request answered by the handlers: the webhook, the status page, probes, metrics and /status.

export async function handle(
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
