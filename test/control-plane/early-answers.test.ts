import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { rawRequest } from "../support/raw-http.js";

// An answer given before the request's body was read (a refused key, a wrong content type, an
// unknown upload URL, a body over the limit) says `Connection: close` and ends the connection once
// written. Kept alive, Node read and dropped the rest of the body for the next request: a client
// without a key could stream gigabytes through one connection. An unknown upload URL is refused
// before its body (up to 64 MiB, kept whole) is read. Raw sockets: fetch hides the connection.

let cp: RunningControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0 });
});
afterAll(async () => {
  await cp.stop();
});

const MiB = 1024 * 1024;
/** An early answer's connection closes at once: far under a keep-alive timeout (5 s; fastify's 72 s). */
const AT_ONCE_MS = 2_000;
const key = `X-Api-Key: ${DEFAULT_API_KEY}\r\n`;
const create = (headers: string) => `POST /v2/deployments HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}`;
const early: Array<[name: string, head: string, status: number, chunked?: boolean]> = [
  ["401, no key", create(`Content-Type: application/json\r\nContent-Length: ${64 * MiB}\r\n`), 401],
  [
    "401, no key, chunked",
    create(`Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n`),
    401,
    true,
  ],
  [
    "413, not JSON, declared over the limit",
    create(`${key}Content-Type: text/plain\r\nContent-Length: ${64 * MiB}\r\n`),
    413,
  ],
  [
    "415, not JSON, on the agent server",
    `POST /agents/00000000-0000-4000-8000-0000000000aa/threads HTTP/1.1\r\nHost: 127.0.0.1\r\n${key}Content-Type: text/plain\r\nContent-Length: ${64 * MiB}\r\n`,
    415,
  ],
  [
    "413, declared over the limit",
    create(`${key}Content-Type: application/json\r\nContent-Length: ${64 * MiB}\r\n`),
    413,
  ],
  [
    "413, chunked past the limit",
    create(`${key}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n`),
    413,
    true,
  ],
  [
    "404, unknown upload URL",
    `PUT /uploads/deadbeef HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${60 * MiB}\r\n`,
    404,
  ],
];

describe("an answer before the body is read", () => {
  it.each(early)("%s: Connection: close, and the connection ended", async (_name, head, status, chunked) => {
    const request = rawRequest(cp.url, head);
    await request.push(64 * MiB, { chunked, untilAnswered: true });
    const answer = await request.answer;
    expect(answer.status).toBe(status);
    expect(answer.headers.connection).toBe("close");
    expect(await request.closedAfterAnswerMs).toBeLessThan(AT_ONCE_MS);
  });

  it.each(early)("%s: the client cannot go on sending the body", async (_name, head, _status, chunked) => {
    const request = rawRequest(cp.url, head);
    // Written while the server reads and drops, or holds; only socket buffers once it has closed.
    const written = await request.push(60 * MiB, { chunked });
    request.socket.destroy();
    expect(written).toBeLessThan(24 * MiB);
  });

  it("keeps the connection of a request whose body was read", async () => {
    const body = JSON.stringify({ name: "x" }); // 422: read, then refused
    const request = rawRequest(
      cp.url,
      create(`${key}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`),
    );
    request.socket.write(body);
    const answer = await request.answer;
    expect(answer.status).toBe(422);
    expect(answer.headers.connection).not.toBe("close");
    request.socket.write(`GET /info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await request.received(/HTTP\/1\.1 422[^]*HTTP\/1\.1 200 OK/);
    request.socket.destroy();
  });
});
