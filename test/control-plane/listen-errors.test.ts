import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { PlumbError } from "../../src/errors.js";

// A port that is taken or an address that is not ours is the user's to fix: a typed error that
// names host:port and says what to do, exit 1 — never a stack trace and exit 70.

let held: Server | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await new Promise((resolve) => (held ? held.close(resolve) : resolve(undefined)));
  held = undefined;
});

async function busyPort(): Promise<number> {
  held = createServer();
  await new Promise<void>((resolve) => held!.listen(0, "127.0.0.1", resolve));
  const address = held.address();
  return typeof address === "object" && address ? address.port : 0;
}

describe("control plane listen errors", () => {
  it("plumb control-plane on a port in use: names host:port, says what to do, exit 1", async () => {
    const port = await busyPort();
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      err += String(chunk);
      return true;
    });
    const env = process.env.PLUMB_LOG_LEVEL;
    process.env.PLUMB_LOG_LEVEL = "silent";
    try {
      const code = await main(["node", "plumb", "control-plane", "--port", String(port)]);
      expect(code).toBe(1);
    } finally {
      if (env === undefined) delete process.env.PLUMB_LOG_LEVEL;
      else process.env.PLUMB_LOG_LEVEL = env;
    }
    expect(err).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    expect(err).toContain("--port");
    expect(err).toContain("[listen-failed]");
    expect(err).not.toContain("unexpected error");
    expect(err).not.toMatch(/\n\s+at /); // no stack frames
  });

  it("an address that is not this machine's is a listen-failed error too", async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a local interface.
    const failure = await startControlPlane({ host: "192.0.2.1", port: 0 }).then(
      async (cp) => {
        await cp.stop();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PlumbError);
    expect((failure as PlumbError).code).toBe("listen-failed");
    expect((failure as PlumbError).exitCode).toBe(1);
    expect((failure as PlumbError).message).toContain("192.0.2.1:0 (EADDRNOTAVAIL)");
    expect((failure as PlumbError).message).toContain("--host");
  });
});
