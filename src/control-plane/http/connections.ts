import type { IncomingMessage } from "node:http";
import type { Server } from "node:net";
import type { Logger } from "pino";

// What the control plane's HTTP server does with its connections, beyond one request's answer.

/**
 * The request says a body follows (Content-Length above 0, or Transfer-Encoding) and not all of it
 * has arrived: an answer now (401, 415, 404 of an upload URL …) is given before the body was read.
 * That answer closes the connection (`Connection: close`, ended once written): kept alive, Node
 * would read and drop the rest of the body, however long, for the client to send another request.
 */
export const bodyStillComing = (raw: IncomingMessage): boolean =>
  (raw.headers["transfer-encoding"] !== undefined || Number(raw.headers["content-length"] ?? 0) > 0) &&
  !raw.complete;

/** Connections open at once (`maxConnections`): one more is closed as it arrives. */
export const DEFAULT_MAX_CONNECTIONS = 512;
/** How long a kept-alive connection may wait for its next request (`keepAliveTimeoutMs`). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** At most one log line about refused connections per this many milliseconds. */
const DROP_LOG_MS = 10_000;

/**
 * Caps the connections open at once: past `max`, Node closes a new connection as it arrives,
 * unanswered (its client sees the connection reset or ended), before it can cost a socket's
 * buffers or a file descriptor the journal needs. Refusals are logged, at most once per 10 s.
 */
export function capConnections(server: Server, max: number, logger: Logger | false, now: () => number): void {
  server.maxConnections = max;
  let refused = 0;
  let saidAt = -Infinity;
  server.on("drop", () => {
    refused++;
    if (!logger || now() - saidAt < DROP_LOG_MS) return;
    saidAt = now();
    logger.warn({ maxConnections: max, refused }, "connection refused: too many open connections");
  });
}
