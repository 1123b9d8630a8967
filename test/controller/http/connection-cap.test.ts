import { Registry } from "prom-client";
import { afterEach, expect, it } from "vitest";
import {
  type ControllerHttp,
  MAX_CONNECTIONS,
  MAX_CONNECTIONS_PER_CLIENT,
  startControllerHttp,
} from "../../../src/controller/http/http-server.js";
import { type RawRequest, rawRequest } from "../../support/raw-http.js";

// The controller's HTTP server caps the connections open at once (256), and those of one client
// address (192, three quarters): one more is closed unanswered as it arrives, and the ones open keep working.
// Without a cap they were bounded only by the process's file descriptors, which its git, status
// store and API calls share; without the per-client one a single client could hold all 256 and
// starve the kubelet's probes. Clients are told apart by 127.0.0.x addresses (Linux's loopback).

let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

const livez = "GET /livez HTTP/1.1\r\nHost: 127.0.0.1";
const start = (maxConnections?: number, maxConnectionsPerClient?: number) =>
  startControllerHttp(
    { host: "127.0.0.1", port: 0, maxConnections, maxConnectionsPerClient },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => {},
    },
  );

/** `count` connections, each answered, from `from` (127.0.0.1 by default). */
async function answered(url: string, count: number, from?: string): Promise<RawRequest[]> {
  const requests = Array.from({ length: count }, () => rawRequest(url, livez, from));
  expect((await Promise.all(requests.map((r) => r.answer))).map((a) => a.status)).toEqual(
    requests.map(() => 200),
  );
  return requests;
}

const closedUnanswered = /closed before an answer: ""/;

it("with a cap of 3: the first ones answer, one more is closed unanswered", async () => {
  http = await start(3);
  const first = await answered(http.url, 3);
  await expect(rawRequest(http.url, livez).answer).rejects.toThrow(closedUnanswered);
  first[0]!.socket.write(`${livez}\r\n\r\n`); // an open one still answers
  await first[0]!.received(/200 OK[^]*200 OK/);
  for (const r of first) r.socket.destroy();
});

it(`with the defaults: ${MAX_CONNECTIONS} from two clients answer, one more from a third does not`, async () => {
  http = await start();
  const first = [
    ...(await answered(http.url, MAX_CONNECTIONS_PER_CLIENT, "127.0.0.1")),
    ...(await answered(http.url, MAX_CONNECTIONS - MAX_CONNECTIONS_PER_CLIENT, "127.0.0.2")),
  ];
  await expect(rawRequest(http.url, livez, "127.0.0.3").answer).rejects.toThrow(closedUnanswered);
  for (const r of first) r.socket.destroy();
});

it.each([
  ["3 (set)", 3],
  [`${MAX_CONNECTIONS_PER_CLIENT} (the default)`, undefined],
])(
  "one client holds at most %s: one more from it is closed, another client's probe answers",
  async (_name, perClient) => {
    http = await start(undefined, perClient);
    const held = await answered(http.url, perClient ?? MAX_CONNECTIONS_PER_CLIENT, "127.0.0.1");
    await expect(rawRequest(http.url, livez, "127.0.0.1").answer).rejects.toThrow(closedUnanswered);
    const probe = await answered(http.url, 1, "127.0.0.2");
    // A connection it closes is its own again: the next one from it answers.
    const closed = new Promise((resolve) => held[0]!.socket.once("close", resolve));
    held[0]!.socket.destroy();
    await closed;
    await expect
      .poll(async () => (await rawRequest(http!.url, livez, "127.0.0.1").answer.catch(() => null))?.status)
      .toBe(200);
    for (const r of [...held, ...probe]) r.socket.destroy();
  },
);
