import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import type { ControlPlaneOptions } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { type RawRequest, rawRequest } from "../support/raw-http.js";

// The local control plane caps the connections open at once (maxConnections, default 512): one
// past the cap is closed unanswered as it arrives, and the first ones keep working. A kept-alive
// connection left idle is closed after keepAliveTimeoutMs (default 5 s; fastify's own was 72 s).
// Without the cap, connections were bounded only by the process's file descriptors, which the
// journal's writes (--data) share.

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
});

const info = "GET /info HTTP/1.1\r\nHost: 127.0.0.1";

async function open(options: Partial<ControlPlaneOptions>) {
  cp = await startControlPlane({ revisionSeconds: 0, ...options });
  return cp.url;
}

/** `count` connections from `from` (default 127.0.0.1), each answered 200 to GET /info (kept alive). */
async function answered(url: string, count: number, from?: string): Promise<RawRequest[]> {
  const requests = Array.from({ length: count }, () => rawRequest(url, info, from));
  expect((await Promise.all(requests.map((r) => r.answer))).map((a) => a.status)).toEqual(
    requests.map(() => 200),
  );
  return requests;
}

/** A connection past the cap: closed with no answer at all. */
async function refused(url: string, from?: string) {
  const extra = rawRequest(url, info, from);
  await expect(extra.answer).rejects.toThrow(/closed before an answer: ""/);
}

describe("connections open at once", () => {
  it("with maxConnections 4: the first 4 work, a 5th is closed unanswered, and logged", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()),
    });
    const url = await open({ maxConnections: 4, logger: createLogger({ name: "cp", level: "info" }, sink) });
    const first = await answered(url, 4);
    await refused(url);
    // The first four still answer, on the same connections.
    for (const r of first) r.socket.write(`${info}\r\n\r\n`);
    await Promise.all(first.map((r) => r.received(/200 OK[^]*200 OK/)));
    expect(lines.join("")).toMatch(
      /"maxConnections":4,"perAddress":256,"refused":1,"msg":"connection refused: too many open connections"/,
    );
    // One closed frees its place: a new connection is answered once the server has seen it go.
    first[0]!.socket.destroy();
    for (;;) {
      const next = rawRequest(url, info);
      const status = await next.answer.then((a) => a.status).catch(() => 0);
      next.socket.destroy();
      if (status === 200) break;
    }
    for (const r of first) r.socket.destroy();
  });

  it("by default 512 in all and 256 per address: the 257th from one address and the 513th are closed", async () => {
    const url = await open({});
    const first = await answered(url, 256);
    await refused(url);
    const second = await answered(url, 256, "127.0.0.2");
    await refused(url, "127.0.0.3");
    for (const r of [...first, ...second]) r.socket.destroy();
  });
});

// One address could take every place (spec 8.2 limits requests per identity, not connections; a
// client that opens connections and sends nothing held them all): past maxConnectionsPerAddress,
// a connection from that address is closed as it arrives, and other addresses are still served.
describe("connections open at once from one address", () => {
  it("with maxConnectionsPerAddress 3: a 4th from that address is closed, another address is served", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()),
    });
    const logger = createLogger({ name: "cp", level: "info" }, sink);
    const url = await open({ maxConnectionsPerAddress: 3, logger });
    const mine = await answered(url, 3);
    await refused(url);
    const theirs = await answered(url, 3, "127.0.0.2");
    expect(lines.join("")).toMatch(
      /"refused":1,"msg":"connection refused: too many open connections from one address"/,
    );
    // Closing one gives its address a place again.
    mine[0]!.socket.destroy();
    for (;;) {
      const next = rawRequest(url, info);
      const status = await next.answer.then((a) => a.status).catch(() => 0);
      next.socket.destroy();
      if (status === 200) break;
    }
    for (const r of [...mine, ...theirs]) r.socket.destroy();
  });
});

describe("an idle kept-alive connection", () => {
  it("is closed by the server after keepAliveTimeoutMs", async () => {
    const url = await open({ keepAliveTimeoutMs: 200 });
    const [kept] = await answered(url, 1);
    expect(await kept!.closed).toBe("end");
  });

  it("is kept 5 s by default, as its answers say", async () => {
    const url = await open({});
    const [kept] = await answered(url, 1);
    expect((await kept!.answer).headers["keep-alive"]).toBe("timeout=5");
    kept!.socket.destroy();
  });
});
