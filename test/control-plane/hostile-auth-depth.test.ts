import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { jsonDepthExceeds } from "../../src/control-plane/http/json/json-scan.js";
import { type Api, ManualClock, start } from "./helpers.js";

// Hostile input the control plane must shrug off: random keys (no bucket per key presented, failures
// limited per address) and bodies nested deeper than anything can serialise (refused up front).

let api: Api;
afterEach(() => api?.cp.stop());

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("failed authentication is limited per address, not per key presented", () => {
  it("random wrong keys get 401 until 100 failures in 10 s, then 429 with Retry-After; a good key still works", async () => {
    const clock = new ManualClock();
    api = await start({ clock });
    const codes: number[] = [];
    for (let i = 0; i < 120; i++) {
      const wrong = randomBytes(32).toString("hex"); // a new key each time: no bucket of its own
      codes.push((await api.call("GET", "/v2/deployments", undefined, { "x-api-key": wrong })).status);
    }
    expect(codes.slice(0, 100).every((c) => c === 401)).toBe(true);
    expect(codes.slice(100).every((c) => c === 429)).toBe(true);
    const limited = await api.call("GET", "/v2/deployments", undefined, { "x-api-key": "nope" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await api.call("GET", "/v2/deployments")).status).toBe(200); // the granted key is not locked out
    clock.advance(61); // both windows over: failures (10 s) and the unauthenticated catch-all (60 s)
    expect((await api.call("GET", "/v2/deployments", undefined, { "x-api-key": "nope" })).status).toBe(401);
  });

  it("a missing key counts as a failure too", async () => {
    api = await start({ authFailureLimit: { count: 3, intervalSeconds: 10 } });
    const codes = [];
    for (let i = 0; i < 5; i++)
      codes.push((await api.call("GET", "/v2/deployments", undefined, { "x-api-key": "" })).status);
    expect(codes).toEqual([401, 401, 401, 429, 429]);
  });
});

describe("JSON nesting limit", () => {
  it("counts brackets outside strings only", () => {
    expect(jsonDepthExceeds(nested(64))).toBe(false);
    expect(jsonDepthExceeds(nested(65))).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ a: "[".repeat(500) }))).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ a: 'x\\"[[[' }))).toBe(false);
  });

  it("a body nested 5,000 deep is a 422 on every route, and writes keep working afterwards", async () => {
    api = await start();
    const deep = `{"input": ${nested(5000)}}`;
    for (const [method, path] of [
      ["POST", "/v2/deployments"],
      ["PATCH", "/v2/deployments/00000000-0000-4000-8000-000000000001"],
      ["POST", "/agents/00000000-0000-4000-8000-000000000001/threads/search"],
    ] as const) {
      const answer = await api.call(method, path, deep, { "content-type": "application/json" });
      expect(answer.status, `${method} ${path}`).toBe(422);
      expect(JSON.stringify(answer.body)).toContain("nested deeper than 64 levels");
    }
    const created = await api.call("POST", "/v2/deployments", {
      name: "after-deep",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/a:1" },
      secrets: [],
    });
    expect(created.status).toBe(201);
  });
});
