import { connect } from "node:net";
import { afterAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";

// A request whose body never finishes is cut after the request timeout. fastify turns Node's own
// limit off (requestTimeout 0), so a client that sent headers and part of a body, then went quiet,
// held its connection and the body read so far for ever: 200 unfinished 1 MB bodies, with a key,
// took a local control plane from 70 to 275 MB, and it never came back down.

const planes: RunningControlPlane[] = [];
afterAll(async () => {
  for (const cp of planes) await cp.stop();
});

it("closes a connection whose request body stalls, once the request timeout has passed", async () => {
  const cp = await startControlPlane({ revisionSeconds: 0, requestTimeoutMs: 500 });
  planes.push(cp);
  const socket = connect(Number(new URL(cp.url).port), "127.0.0.1");
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  let answer = "";
  socket.on("data", (chunk: Buffer) => (answer += chunk.toString("utf8")));
  const closed = new Promise<boolean>((resolve) => {
    socket.once("close", () => resolve(true));
    setTimeout(() => resolve(false), 10_000);
  });
  // Headers promise 100,000 bytes of body; 1,000 arrive, then nothing.
  socket.write(
    `POST /v2/deployments HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${DEFAULT_API_KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name": "${"x".repeat(1000)}`,
  );
  expect(await closed).toBe(true);
  expect(answer).toMatch(/^HTTP\/1\.1 408/);
}, 20_000);

it("leaves a request that arrived whole alone, however long its answer takes", async () => {
  // Every answer 1.2 s late: past the timeout, which counts only the request's own arrival.
  const faults = { rates: [], latency: { minMs: 1200, maxMs: 1200 } };
  const cp = await startControlPlane({ revisionSeconds: 0, requestTimeoutMs: 500, faults });
  planes.push(cp);
  const res = await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": DEFAULT_API_KEY } });
  expect(res.status).toBe(200);
});
