import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { signBody } from "../../src/controller/source/webhook.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, waitFor, writeDoc } from "./support.js";

// The real controller's HTTP side: the names it answers reach its server (--allowed-host), a
// foreign Host gets 421, and a webhook delivery is accepted once.

const h = useControllerHarness("plumb-http-guards-");

function call(
  url: string,
  path: string,
  init: { host?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      {
        hostname,
        port,
        path,
        method: init.method ?? "GET",
        headers: { ...(init.host ? { host: init.host } : {}), ...init.headers },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

describe("the controller's HTTP guards", () => {
  it("answers its allowed names and IP addresses, 421 to others, and each webhook delivery once", async () => {
    await writeDoc(h.dir, "a.yaml", container("alpha", "img/alpha:1"));
    h.controller = await startController(
      fastControllerOptions(h.cp, {
        source: { kind: "dir", dir: h.dir },
        listen: { host: "127.0.0.1", port: 0, allowedHosts: ["plumb.internal"] },
        webhookSecret: "hook-secret",
      }),
    );
    const controller = h.controller;
    await waitFor("ready", () => controller.ready());
    const url = controller.url!;
    expect((await call(url, "/status", { host: "evil.example:9400" })).status).toBe(421);
    expect((await call(url, "/status", { host: "plumb.internal:9400" })).status).toBe(200);
    expect((await call(url, "/readyz", { host: "10.244.0.12:9400" })).status).toBe(200);

    const body = JSON.stringify({ ref: "refs/heads/main", after: "c0ffee" });
    const hook = (delivery: string) =>
      call(url, "/hooks/git", {
        method: "POST",
        headers: { "x-hub-signature-256": signBody("hook-secret", body), "x-github-delivery": delivery },
        body,
      });
    expect((await hook("d-1")).status).toBe(202);
    expect((await hook("d-1")).status).toBe(409);
    expect((await hook("d-2")).status).toBe(409); // the same signed body under another id
    const metrics = (await call(url, "/metrics")).text;
    expect(metrics).toMatch(/plumb_manifest_scans_total\{source="webhook",result="error"\} 2/);
  });
});
