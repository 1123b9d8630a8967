import type { IncomingMessage } from "node:http";
import type { Server, Socket } from "node:net";
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
/**
 * Connections open at once from one client address (`maxConnectionsPerAddress`): half the total,
 * so one address (a client opening connections it never uses) cannot take every place.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
/** How long a kept-alive connection may wait for its next request (`keepAliveTimeoutMs`). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** At most one log line about refused connections per this many milliseconds. */
const DROP_LOG_MS = 10_000;

/**
 * Caps the connections open at once: past `max`, Node closes a new connection as it arrives,
 * unanswered (its client sees the connection reset or ended), before it can cost a socket's
 * buffers or a file descriptor the journal needs; past `perAddress` from the client's address,
 * this closes it the same way. Refusals are logged, at most once per 10 s.
 */
export function capConnections(
  server: Server,
  limits: { max: number; perAddress: number },
  logger: Logger | false,
  now: () => number,
): void {
  server.maxConnections = limits.max;
  let refused = 0;
  let saidAt = -Infinity;
  const refuse = (why: string) => {
    refused++;
    if (!logger || now() - saidAt < DROP_LOG_MS) return;
    saidAt = now();
    logger.warn({ maxConnections: limits.max, perAddress: limits.perAddress, refused }, why);
  };
  server.on("drop", () => refuse("connection refused: too many open connections"));
  // Open connections per address: an entry lives while its address has one open, so the map
  // holds at most `max` entries.
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      socket.destroy();
      refuse("connection refused: too many open connections from one address");
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
