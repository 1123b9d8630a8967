import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PlumbError } from "../../errors.js";
import { createEventStreams } from "./event-streams.js";
import { createHostCheck } from "./host-check.js";
import { createWebhookGuard } from "../source/webhook.js";
import {
  limitPerClient,
  MAX_CONNECTIONS,
  MAX_CONNECTIONS_PER_CLIENT,
} from "./http-server/connection-limits.js";
import type { HttpHandlers, ServerState } from "./http-server/http-handlers.js";
import { carriesBody } from "./http-server/request-body.js";
import { send } from "./http-server/responses.js";
import { handle } from "./http-server/route-request.js";

export { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT } from "./http-server/connection-limits.js";
export type { HttpHandlers } from "./http-server/http-handlers.js";

// The controller's HTTP face: probes, metrics, status, the status page and the git webhook.
// node:http keeps it small.

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
