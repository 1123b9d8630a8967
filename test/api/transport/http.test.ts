import { shapeCheck } from "../../../src/schema/validators.js";
import nock from "nock";
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/api/errors.js";
import {
  createHttpClient,
  type HttpClientOptions,
  type ResponseEvent,
} from "../../../src/api/transport/http.js";
import { BASE, fakeClock, KEY, useStrictNock } from "../helpers.js";

useStrictNock();

const systemError = (code: string) => Object.assign(new Error(`${code} (simulated)`), { code });

function client(extra: Partial<HttpClientOptions> = {}) {
  const clock = fakeClock();
  const events: ResponseEvent[] = [];
  const http = createHttpClient({
    baseUrl: `${BASE}/`,
    auth: { scheme: "api-key", apiKey: KEY, tenantId: "tenant-1" },
    clock,
    random: () => 0.5,
    retry: { baseDelayMs: 100, maxDelayMs: 1000 },
    onResponse: (e) => events.push(e),
    ...extra,
  });
  return { http, clock, events };
}

const caught = async (promise: Promise<unknown>): Promise<ApiError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
};

describe("request core", () => {
  it("releases an exchange's timeout when it ends (thousands of live 30 s timers were most of the controller's garbage)", async () => {
    const signals: AbortSignal[] = [];
    const recordingFetch: typeof fetch = async (_url, init) => {
      signals.push(init!.signal!);
      return new Response(JSON.stringify({ ok: true }), { headers: { "content-type": "application/json" } });
    };
    const { http } = client({ fetch: recordingFetch });
    const stop = new AbortController();
    for (let i = 0; i < 20; i++)
      await http.request({ method: "GET", path: "/v2/things", signal: stop.signal, timeoutMs: 20 });
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(0);
    // Were the timers still running, each finished exchange's signal would abort 20 ms later.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signals.filter((signal) => signal.aborted)).toHaveLength(0);
  });

  it("sends the key, tenant and JSON, and reads JSON back", async () => {
    nock(BASE, {
      reqheaders: { "x-api-key": KEY, "x-tenant-id": "tenant-1", "content-type": "application/json" },
    })
      .post("/v2/things", { a: 1 })
      .query({ limit: "5" })
      .reply(201, { ok: true });
    const { http, events } = client();
    const body = await http.request({
      method: "POST",
      path: "/v2/things",
      query: { limit: 5, skip: undefined },
      body: { a: 1 },
    });
    expect(body).toEqual({ ok: true });
    expect(events).toEqual([
      {
        method: "POST",
        path: "/v2/things",
        route: "/v2/things",
        status: 201,
        durationMs: 0,
        attempt: 1,
        waitedMs: 0,
      },
    ]);
  });

  it("uses Authorization: Bearer for the bearer scheme and no tenant header when unset", async () => {
    nock(BASE, { reqheaders: { authorization: `Bearer ${KEY}` }, badheaders: ["x-api-key", "x-tenant-id"] })
      .get("/api/v1/organizations/current/info")
      .reply(200, {});
    const { http } = client({ auth: { scheme: "bearer", apiKey: KEY } });
    await http.request({ method: "GET", path: "/api/v1/organizations/current/info" });
  });

  it("returns undefined for 204", async () => {
    nock(BASE).delete("/v2/things/1").reply(204);
    const { http } = client();
    expect(await http.request({ method: "DELETE", path: "/v2/things/1" })).toBeUndefined();
  });

  it("turns a 422 into field errors, and scrubs the key out of any detail", async () => {
    nock(BASE)
      .patch("/v2/d/1")
      .reply(422, {
        detail: [{ loc: ["body", "source_config", "resource_spec", "cpu"], msg: `bad ${KEY}`, type: "t" }],
      });
    const error = await caught(client().http.request({ method: "PATCH", path: "/v2/d/1", body: {} }));
    expect(error.code).toBe("validation");
    expect(error.status).toBe(422);
    expect(error.fieldErrors()[0]?.field).toBe("source_config.resource_spec.cpu");
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain("[redacted]");
  });

  it("writes a server's control characters as escapes: no line break or escape sequence reaches a log", async () => {
    nock(BASE).get("/v2/things").reply(400, { detail: "bad\n::error::forged\u001b[2J\u009b2J\u007f" });
    const error = await caught(client().http.request({ method: "GET", path: "/v2/things" }));
    expect(error.message).toContain("bad\\n::error::forged\\u001b[2J\\u009b2J\\u007f");
    // eslint-disable-next-line no-control-regex -- what must not be there (C0, DEL and C1)
    expect(error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it("keeps a short excerpt of a non-JSON error body", async () => {
    nock(BASE).get("/x").reply(400, "<html>bad gateway config</html>");
    const error = await caught(client().http.request({ method: "GET", path: "/x" }));
    expect(error.detail).toBe("<html>bad gateway config</html>");
    expect(error.code).toBe("bad-request");
  });
});

describe("retries", () => {
  it("retries an idempotent call on 5xx with jittered exponential backoff", async () => {
    nock(BASE).get("/x").reply(503).get("/x").reply(502).get("/x").reply(500).get("/x").reply(200, { n: 1 });
    const { http, clock, events } = client();
    expect(await http.request({ method: "GET", path: "/x" })).toEqual({ n: 1 });
    expect(clock.sleeps).toEqual([50, 100, 200]); // random 0.5 × 100, 200, 400
    expect(events.map((e) => [e.status, e.attempt])).toEqual([
      [503, 1],
      [502, 2],
      [500, 3],
      [200, 4],
    ]);
  });

  it("retries PATCH with the same body (absolute values merge idempotently)", async () => {
    nock(BASE).patch("/d", { x: 1 }).reply(500).patch("/d", { x: 1 }).reply(200, {});
    await client().http.request({ method: "PATCH", path: "/d", body: { x: 1 } });
  });

  it("does not retry a POST after a 5xx: the outcome is unknown", async () => {
    nock(BASE).post("/x").reply(502);
    const error = await caught(client().http.request({ method: "POST", path: "/x", body: {} }));
    expect(error.code).toBe("server-error");
    expect(error.ambiguous).toBe(true);
  });

  it("never retries 4xx other than 429", async () => {
    nock(BASE).get("/x").reply(404, { detail: "Deployment ID x not found." });
    const error = await caught(client().http.request({ method: "GET", path: "/x" }));
    expect(error.code).toBe("not-found");
    expect(error.ambiguous).toBe(false);
  });

  it("honours Retry-After in seconds on 429, even for a POST (refused before any work)", async () => {
    nock(BASE)
      .post("/x")
      .reply(429, { detail: "Rate limit exceeded" }, { "Retry-After": "3" })
      .post("/x")
      .reply(201, {});
    const { http, clock } = client();
    await http.request({ method: "POST", path: "/x", body: {} });
    expect(clock.sleeps[0]).toBe(3000);
  });

  it("honours Retry-After as an HTTP date", async () => {
    const { http, clock } = client();
    const at = new Date(clock.now() + 7000).toUTCString();
    nock(BASE).get("/x").reply(429, {}, { "Retry-After": at }).get("/x").reply(200, {});
    await http.request({ method: "GET", path: "/x" });
    expect(clock.sleeps[0]).toBeGreaterThan(6000);
    expect(clock.sleeps[0]).toBeLessThanOrEqual(7000);
  });

  it("backs off with jitter on a 429 without Retry-After", async () => {
    nock(BASE).get("/x").reply(429).get("/x").reply(200, {});
    const { http, clock } = client({ random: () => 0.25 });
    await http.request({ method: "GET", path: "/x" });
    expect(clock.sleeps[0]).toBe(25);
  });

  it("stops after maxAttempts and throws the last error", async () => {
    nock(BASE).get("/x").times(3).reply(503);
    const error = await caught(
      client({ retry: { maxAttempts: 3 } }).http.request({ method: "GET", path: "/x" }),
    );
    expect(error.status).toBe(503);
  });

  it("stops when the next wait would pass maxElapsedMs", async () => {
    nock(BASE).get("/x").reply(429, {}, { "Retry-After": "60" });
    const { http, clock } = client({ retry: { maxElapsedMs: 30_000 } });
    const error = await caught(http.request({ method: "GET", path: "/x" }));
    expect(error.code).toBe("rate-limited");
    expect(error.retryAfterMs).toBe(60_000);
    expect(clock.sleeps).toEqual([]);
  });

  it("retries a GET after a connection reset, typed as network with status 0", async () => {
    nock(BASE).get("/x").replyWithError(systemError("ECONNRESET")).get("/x").reply(200, { ok: 1 });
    expect(await client().http.request({ method: "GET", path: "/x" })).toEqual({ ok: 1 });
  });

  it("does not retry a POST after a reset, and marks it ambiguous", async () => {
    nock(BASE).post("/x").replyWithError(systemError("ECONNRESET"));
    const error = await caught(client().http.request({ method: "POST", path: "/x", body: {} }));
    expect([error.code, error.status, error.ambiguous, error.detail]).toEqual([
      "network",
      0,
      true,
      "ECONNRESET",
    ]);
  });

  it("retries a POST refused at connect once the server has answered: it never reached a restarting server", async () => {
    nock(BASE).get("/ok").reply(200, {});
    nock(BASE).post("/x").replyWithError(systemError("ECONNREFUSED")).post("/x").reply(201, {});
    const http = client().http;
    await http.request({ method: "GET", path: "/ok" });
    await http.request({ method: "POST", path: "/x", body: {} });
  });

  it("fails at once, naming the server, when the very first connection is refused (wrong URL, server down)", async () => {
    nock(BASE).get("/x").replyWithError(systemError("ECONNREFUSED")).get("/x").reply(200, {});
    const error = await caught(client().http.request({ method: "GET", path: "/x" }));
    expect(error.code).toBe("network");
    expect(error.message).toContain(`nothing accepts connections at ${new URL(BASE).origin}`);
    expect(nock.pendingMocks()).toHaveLength(1); // one attempt: the answer a retry would get is unused
    nock.cleanAll();
  });

  it("fails at once, naming the host, when the URL's host name does not resolve (a typo)", async () => {
    nock(BASE).get("/x").replyWithError(systemError("ENOTFOUND")).get("/x").reply(200, {});
    const error = await caught(client().http.request({ method: "GET", path: "/x" }));
    expect(error.message).toContain(`the host name ${new URL(BASE).hostname} does not resolve`);
    expect(error.message).not.toContain("is the server running");
    expect(nock.pendingMocks()).toHaveLength(1); // one attempt: five more only delayed the error
    nock.cleanAll();
  });
});

describe("response shape", () => {
  // A check compiled at build time (schema/validators.ts), lenient about fields a server adds.
  const Shape = shapeCheck("UploadUrl");

  it("accepts a matching body and extra fields a newer server may add", async () => {
    nock(BASE).get("/x").reply(200, { upload_url: "a", object_path: "o", added_later: true });
    expect(await client().http.request({ method: "GET", path: "/x", schema: Shape })).toMatchObject({
      upload_url: "a",
    });
  });

  it("raises unexpected-response for a wrong shape or a non-JSON body", async () => {
    // The first problem only (ajv stops there: a hostile answer costs one error, not millions).
    nock(BASE).get("/x").reply(200, { upload_url: 5, object_path: "o" }).get("/y").reply(200, "<html>");
    const wrong = await caught(client().http.request({ method: "GET", path: "/x", schema: Shape }));
    expect(wrong.code).toBe("unexpected-response");
    expect(wrong.message).toContain("(/upload_url: must be string)");
    const html = await caught(client().http.request({ method: "GET", path: "/y", schema: Shape }));
    expect(html.code).toBe("unexpected-response");
  });
});

describe("timeouts and cancellation", () => {
  /** A fetch that never answers until aborted, as a hung server would (nock's delay cannot abort). */
  const hangingFetch: typeof fetch = (_url, init) =>
    new Promise((_resolve, reject) => {
      if (init?.signal?.aborted) return reject(init.signal.reason as Error);
      init?.signal?.addEventListener("abort", () => reject(init.signal?.reason as Error));
    });

  it("times out each attempt and types it", async () => {
    const { http, events } = client({ fetch: hangingFetch, timeoutMs: 20, retry: { maxAttempts: 2 } });
    const error = await caught(http.request({ method: "GET", path: "/x" }));
    expect([error.code, error.status, error.ambiguous]).toEqual(["timeout", 0, true]);
    expect(events).toHaveLength(2);
  });

  it("passes a caller's abort through untouched and does not retry", async () => {
    const controller = new AbortController();
    const { http } = client({ fetch: hangingFetch });
    const pending = http.request({ method: "GET", path: "/x", signal: controller.signal });
    controller.abort(new Error("user cancelled"));
    await expect(pending).rejects.toThrow("user cancelled");
  });
});

describe("credentials", () => {
  it("never sends the key to another origin (signed upload URLs)", async () => {
    nock("https://storage.test", { badheaders: ["x-api-key", "authorization", "x-tenant-id"] })
      .put("/bucket/obj")
      .query(true)
      .reply(200);
    await client().http.request({
      method: "PUT",
      url: "https://storage.test/bucket/obj?sig=abc",
      path: "/bucket/obj",
      rawBody: new Uint8Array([1]),
    });
  });
});

describe("hostile answers", () => {
  it("never follows a redirect: the key and a POST's secret values stay with the API URL's origin", async () => {
    nock(BASE)
      .post("/v2/deployments")
      .reply(307, "", { location: "http://elsewhere.test/v2/deployments?token=abc" });
    const elsewhere = nock("http://elsewhere.test").post("/v2/deployments").query(true).reply(200, {});
    const error = await caught(
      client().http.request({
        method: "POST",
        path: "/v2/deployments",
        body: { secrets: [{ name: "K", value: "sk-secret" }] },
      }),
    );
    const followed = elsewhere.isDone();
    nock.cleanAll();
    expect(followed).toBe(false);
    expect(error.status).toBe(307);
    expect(error.message).toContain("redirect to http://elsewhere.test not followed");
    expect(error.message).not.toContain("token=abc");
  });

  it("lets fetch follow a redirect only for another origin's URL, sent without the key (storage may redirect an upload)", async () => {
    const seen: Array<{ url: string; redirect: string | undefined; key: boolean }> = [];
    const recording: typeof fetch = async (url, init) => {
      const headers = init?.headers as Record<string, string>;
      seen.push({ url: (url as URL).href, redirect: init?.redirect, key: "x-api-key" in headers });
      return new Response(null, { status: 200 });
    };
    const { http } = client({ fetch: recording });
    await http.request({ method: "POST", path: "/v2/deployments", body: {} });
    await http.request({
      method: "PUT",
      url: "https://storage.test/bucket/obj",
      path: "/bucket/obj",
      rawBody: new Uint8Array([1]),
    });
    expect(seen).toEqual([
      { url: `${BASE}/v2/deployments`, redirect: "manual", key: true },
      { url: "https://storage.test/bucket/obj", redirect: "follow", key: false },
    ]);
  });

  /** A fetch whose answer is an endless body; `pulled` counts the bytes plumb asked for. */
  function endlessFetch(status: number) {
    const counter = { pulled: 0 };
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    const endless: typeof fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            counter.pulled += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
        { status, headers: { "content-type": "application/json" } },
      );
    return { endless, counter };
  }

  it("stops reading a body past the limit instead of filling the heap (unexpected-response)", async () => {
    const { endless, counter } = endlessFetch(200);
    const error = await caught(
      client({ fetch: endless }).http.request({ method: "GET", path: "/v2/things" }),
    );
    expect(error.code).toBe("unexpected-response");
    expect(error.message).toContain("body larger than 16 MiB");
    expect(counter.pulled).toBeLessThan(20 * 1024 * 1024);
  });

  it("reads at most 1 MiB of an error body", async () => {
    const { endless, counter } = endlessFetch(400);
    const error = await caught(
      client({ fetch: endless }).http.request({ method: "GET", path: "/v2/things" }),
    );
    expect(error.status).toBe(400);
    expect(counter.pulled).toBeLessThan(4 * 1024 * 1024);
  });
});
