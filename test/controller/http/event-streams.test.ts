import { createServer, get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  createEventStreams,
  type EventStreams,
  MAX_EVENT_STREAMS,
} from "../../../src/controller/http/event-streams.js";
import { type ControllerHttp, startControllerHttp } from "../../../src/controller/http/http-server.js";
import type { PageRoutes } from "../../../src/controller/http/page-routes.js";
import { manualTimers } from "../manual-timers.js";
import { waitFor } from "../support.js";

// The status page's live-update streams hold a socket each: a server keeps at most 100 of them,
// ends each after a while (the page reconnects), and ends one whose client stops reading.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Opens a stream; resolves with the response (its body left flowing) or its status. */
function open(url: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers }, resolve);
    req.on("error", reject);
    cleanups.push(() => void req.destroy());
  });
}

const ended = (res: IncomingMessage) => new Promise<void>((resolve) => res.on("close", () => resolve()));

describe("the status page's event streams", () => {
  it("keeps at most 100 open on the controller's server, then answers 503 with Retry-After", async () => {
    const writers = new Set<(text: string) => void>();
    const page = {
      subscribe: (write: (text: string) => void) => {
        writers.add(write);
        write("event: hello\ndata: {}\n\n");
        return () => writers.delete(write);
      },
    } as unknown as PageRoutes;
    const http: ControllerHttp = await startControllerHttp(
      { host: "127.0.0.1", port: 0 },
      {
        ready: () => true,
        registry: new Registry(),
        status: () => ({}),
        webhookSecret: undefined,
        onWebhook: () => undefined,
        page,
      },
    );
    cleanups.push(() => http.close());
    const streams: IncomingMessage[] = [];
    for (let i = 0; i < MAX_EVENT_STREAMS; i++) {
      const res = await open(`${http.url}/ui/events`);
      expect(res.statusCode).toBe(200);
      res.resume();
      streams.push(res);
    }
    expect(writers.size).toBe(MAX_EVENT_STREAMS);
    const refused = await open(`${http.url}/ui/events`);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBe("10");
    refused.resume();
    // A page that leaves frees its slot for the next one.
    streams[0]!.destroy();
    await waitFor("the slot freed", () => writers.size === MAX_EVENT_STREAMS - 1);
    const next = await open(`${http.url}/ui/events`);
    expect(next.statusCode).toBe(200);
    next.resume();
  });

  async function serve(streams: EventStreams, subscribe: Parameters<EventStreams["open"]>[2]) {
    const server: Server = createServer((req, res) => streams.open(req, res, subscribe));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("ends a stream after its maximum age, which frees its slot", async () => {
    const timers = manualTimers();
    const streams = createEventStreams({ max: 1, maxAgeMs: 60_000, timers });
    let subscribed = 0;
    const url = await serve(streams, (write) => {
      subscribed++;
      write("event: hello\ndata: {}\n\n");
      return () => subscribed--;
    });
    const res = await open(url);
    res.resume();
    expect(streams.size()).toBe(1);
    expect((await open(url)).statusCode).toBe(503);
    await timers.advance(59_999);
    expect(streams.size()).toBe(1);
    const closed = ended(res);
    await timers.advance(1);
    await closed;
    expect(streams.size()).toBe(0);
    expect(subscribed).toBe(0);
  });

  it("ends a stream whose client stops reading instead of buffering for it", async () => {
    const streams = createEventStreams({ maxBufferedBytes: 64 * 1024 });
    let push: ((text: string) => void) | undefined;
    const url = await serve(streams, (write) => {
      push = write;
      return () => (push = undefined);
    });
    const res = await open(url);
    res.pause(); // a client that never reads
    const chunk = `event: changed\ndata: ${"x".repeat(16 * 1024)}\n\n`;
    // The kernel's socket buffers take the first few MB; then Node buffers; past 64 KiB it ends.
    for (let i = 0; i < 4_000 && push; i++) push(chunk);
    expect(push).toBeUndefined();
    expect(streams.size()).toBe(0);
  });
});
