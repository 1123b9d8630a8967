import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type ControllerHttp, startControllerHttp } from "../../src/controller/http/http-server.js";
import { signBody } from "../../src/controller/source/webhook.js";

// POST /hooks/git on the controller's server: a signed delivery fetches once; the same delivery
// again is refused (409) and fetches nothing.

let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

describe("POST /hooks/git", () => {
  it("accepts a signed delivery once and refuses its replay", async () => {
    const fetched: string[] = [];
    const refused: string[] = [];
    http = await startControllerHttp(
      { host: "127.0.0.1", port: 0 },
      {
        ready: () => true,
        registry: new Registry(),
        status: () => ({}),
        webhookSecret: "hook-secret",
        onWebhook: () => fetched.push("fetch"),
        onBadWebhook: (reason) => refused.push(reason),
      },
    );
    const body = JSON.stringify({ ref: "refs/heads/main", after: "abc" });
    const post = (signature: string, delivery: string) =>
      fetch(`${http!.url}/hooks/git`, {
        method: "POST",
        headers: { "x-hub-signature-256": signature, "x-github-delivery": delivery },
        body,
      });
    expect((await post(signBody("wrong", body), "d-0")).status).toBe(401);
    expect((await post(signBody("hook-secret", body), "d-1")).status).toBe(202);
    const replay = await post(signBody("hook-secret", body), "d-1");
    expect(replay.status).toBe(409);
    expect(await replay.json()).toEqual({ detail: "delivery already received" });
    expect((await post(signBody("hook-secret", body), "d-2")).status).toBe(409);
    expect(fetched).toEqual(["fetch"]);
    expect(refused).toEqual(["signature", "replayed", "replayed"]);
  });
});
