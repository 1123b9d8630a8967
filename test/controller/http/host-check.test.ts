import { request } from "node:http";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createHostCheck, hostName, isLoopback } from "../../../src/controller/http/host-check.js";
import { type ControllerHttp, startControllerHttp } from "../../../src/controller/http/http-server.js";

// DNS rebinding: a page at http://evil.example:9400/ whose name now resolves to 127.0.0.1 sends
// `Host: evil.example:9400`. The controller answers only the names it was told about, and IP
// literals (a kubelet probe or a scrape names the pod's IP).

let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

/** GET with an explicit Host header (fetch will not send a forged one). */
function get(url: string, path: string, host: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("Host check", () => {
  it("reads the name of a Host header: port, brackets, case and a trailing dot set aside", () => {
    expect(hostName("Plumb.Example.com:9400")).toBe("plumb.example.com");
    expect(hostName("plumb.example.com.")).toBe("plumb.example.com");
    expect(hostName("[::1]:9400")).toBe("::1");
    expect(hostName("::1")).toBe("::1");
  });

  it("allows the listen host, localhost, IP literals and the names given; nothing else", () => {
    const allowed = createHostCheck("plumb.internal", ["status.example.com"]);
    for (const host of [
      "plumb.internal:9400",
      "localhost:9400",
      "127.0.0.1:9400",
      "10.1.2.3:9400",
      "[::1]:9400",
      "STATUS.example.com",
    ])
      expect(allowed(host), host).toBe(true);
    for (const host of [
      "evil.example:9400",
      "localhost.evil.example",
      "status.example.com.evil",
      "",
      undefined,
    ])
      expect(allowed(host), String(host)).toBe(false);
    expect(createHostCheck("0.0.0.0")("0.0.0.0:9400")).toBe(true); // an IP literal, not a name
  });

  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "", "10.0.0.1", "plumb.internal", "127.example.com"])
      expect(isLoopback(host), host).toBe(false);
  });

  it("answers 421 to a foreign Host on every path, probes and status included; IP literals pass", async () => {
    http = await startControllerHttp(
      { host: "127.0.0.1", port: 0, allowedHosts: ["status.example.com"] },
      {
        ready: () => true,
        registry: new Registry(),
        status: () => ({ objects: [] }),
        webhookSecret: undefined,
        onWebhook: () => undefined,
      },
    );
    const { port } = new URL(http.url);
    for (const path of ["/status", "/readyz", "/metrics", "/", "/ui/api/header"])
      expect(await get(http.url, path, `evil.example:${port}`), path).toBe(421);
    expect(await get(http.url, "/status", `localhost:${port}`)).toBe(200);
    expect(await get(http.url, "/status", "status.example.com")).toBe(200);
    expect(await get(http.url, "/readyz", "10.244.1.7:9400")).toBe(200); // a kubelet probe by pod IP
    expect(await get(http.url, "/status", `127.0.0.1:${port}`)).toBe(200);
  });
});
