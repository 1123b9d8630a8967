import type { Server } from "node:http";
import type { Socket } from "node:net";

// How many connections the controller holds open: in all, and from one client address.

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
export function limitPerClient(server: Server, max: number): void {
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
