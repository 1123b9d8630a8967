import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";

// stop() lets requests in flight finish, but a client that sent half a request and went quiet (an
// aborted upload, a stalled proxy) cannot hold the server open: its connection is cut after a grace.

describe("stopping the control plane", () => {
  it("does not wait forever for a request whose body never arrives", async () => {
    const cp = await startControlPlane({ revisionSeconds: 0 });
    const { port } = new URL(cp.url);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    // Headers promise 1,000 bytes of body; 10 arrive.
    socket.write(
      `PATCH /v2/deployments/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${DEFAULT_API_KEY}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name": ',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await cp.stop();
    expect(Date.now() - started).toBeLessThan(10_000);
    await closed;
  }, 20_000);
});
