import { Registry } from "prom-client";
import { afterEach, expect, it } from "vitest";
import {
  type ControllerHttp,
  MAX_CONNECTIONS,
  startControllerHttp,
} from "../../../src/controller/http/http-server.js";
import { type RawRequest, rawRequest } from "../../support/raw-http.js";

// The controller's HTTP server caps the connections open at once (256): one more is closed
// unanswered as it arrives, and the ones open keep working. Without a cap they were bounded only
// by the process's file descriptors, which its git, status store and API calls share.

let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

const livez = "GET /livez HTTP/1.1\r\nHost: 127.0.0.1";
const start = (maxConnections?: number) =>
  startControllerHttp(
    { host: "127.0.0.1", port: 0, maxConnections },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: undefined,
      onWebhook: () => {},
    },
  );

async function answered(url: string, count: number): Promise<RawRequest[]> {
  const requests = Array.from({ length: count }, () => rawRequest(url, livez));
  expect((await Promise.all(requests.map((r) => r.answer))).map((a) => a.status)).toEqual(
    requests.map(() => 200),
  );
  return requests;
}

it.each([
  ["3 (set)", 3],
  [`${MAX_CONNECTIONS} (the default)`, undefined],
])("with a cap of %s: the first ones answer, one more is closed unanswered", async (_name, cap) => {
  http = await start(cap);
  const first = await answered(http.url, cap ?? MAX_CONNECTIONS);
  await expect(rawRequest(http.url, livez).answer).rejects.toThrow(/closed before an answer: ""/);
  first[0]!.socket.write(`${livez}\r\n\r\n`); // an open one still answers
  await first[0]!.received(/200 OK[^]*200 OK/);
  for (const r of first) r.socket.destroy();
});
