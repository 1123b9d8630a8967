import { createHmac } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "../controller/harness.js";
import { container, waitFor, writeDoc } from "../controller/support.js";
import { freePort } from "../support/free-port.js";

// Probes with Kubernetes' meaning: /livez is the process answering; /readyz is 200 once the leader
// has loaded its manifests, whatever the control plane does (its health is in plumb_api_up and
// /status), so the Service keeps routing the status page and the webhook to the leader; and the
// HTTP side listens before the first clone, so a startup probe does not wait for it.

const h = useControllerHarness("plumb-probes-");
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

/** A git "server" that takes requests and answers none until released (a clone that hangs). */
async function startHangingGit() {
  const held: ServerResponse[] = [];
  let requested!: () => void;
  const firstRequest = new Promise<void>((resolve) => (requested = resolve));
  const server = createServer((_req, res) => {
    held.push(res);
    requested();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const release = async () => {
    for (const res of held.splice(0)) res.writeHead(500).end();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(release);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifests.git`,
    firstRequest,
    release,
  };
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
};

describe("controller probes", () => {
  it("listens before the first clone: /livez 200 and /readyz 503 while the clone hangs", async () => {
    const git = await startHangingGit();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const starting = startController(
      fastControllerOptions(h.cp, {
        source: {
          kind: "git",
          url: git.url,
          branch: "main",
          workDir: join(h.dir, "checkout"),
          intervalMs: 60_000,
        },
        statusDir: join(h.dir, "status"),
        listen: { host: "127.0.0.1", port },
      }),
    );
    const outcome = starting.then(
      () => "started",
      (error: { code?: string }) => error.code ?? "failed",
    );
    await git.firstRequest; // the clone is under way and gets no answer
    expect((await get(`${url}/livez`)).status).toBe(200);
    expect((await get(`${url}/healthz`)).status).toBe(200);
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toMatchObject({
      ready: false,
      reason: expect.stringContaining("starting"),
    });
    expect((await get(`${url}/metrics`)).text).toMatch(/^plumb_leader 0$/m);

    await git.release(); // the clone fails: startup fails and lets go of the port
    expect(await outcome).not.toBe("started");
    await expect(fetch(`${url}/livez`)).rejects.toThrow();
  });

  it("stays ready while the control plane is unreachable: the page and the webhook keep answering", async () => {
    await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
    const down = await freePort(); // nothing listens there
    const options = fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      listen: { host: "127.0.0.1", port: 0 },
      webhookSecret: "probe-test-webhook-secret",
    });
    h.controller = await startController({
      ...options,
      api: { ...options.api, apiUrl: `http://127.0.0.1:${down}`, platformUrl: `http://127.0.0.1:${down}` },
    });
    const url = h.controller.url!;
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ ready: true });
    await waitFor("plumb_api_up 0", async () => /^plumb_api_up 0$/m.test((await get(`${url}/metrics`)).text));
    expect((await get(`${url}/readyz`)).status).toBe(200);
    expect((await get(`${url}/livez`)).status).toBe(200);
    expect((await get(`${url}/`)).status).toBe(200); // the status page
    const status = JSON.parse((await get(`${url}/status`)).text) as { ready: boolean; settled: boolean };
    expect(status.ready).toBe(true);

    const body = JSON.stringify({ ref: "refs/heads/main" });
    const signature = `sha256=${createHmac("sha256", "probe-test-webhook-secret").update(body).digest("hex")}`;
    const hook = await fetch(`${url}/hooks/git`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": signature },
      body,
    });
    expect(hook.status).toBe(202);
  });
});
