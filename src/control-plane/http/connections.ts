import type { IncomingMessage } from "node:http";

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
