import type { IncomingMessage } from "node:http";
import type { WebhookDigest } from "../../source/webhook.js";

// A request's body: whether one follows, and the webhook's, digested as it arrives up to its limit.

const MAX_WEBHOOK_BYTES = 1024 * 1024;

/**
 * Feeds the body to `digest` as it arrives, keeping none of it; false once it passes the limit,
 * the rest left unread (the answer closes the connection: carriesBody). The request is not
 * destroyed on the way out, which could cut the connection before the 413 is written.
 */
export async function digestBody(req: IncomingMessage, digest: WebhookDigest): Promise<boolean> {
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
export const carriesBody = (req: IncomingMessage): boolean =>
  req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
