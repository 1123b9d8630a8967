import nock from "nock";
import { expect, it } from "vitest";
import { createHttpClient } from "../../src/api/transport/http.js";
import { createRateLimiter } from "../../src/api/transport/rate-limiter.js";
import { PlumbError } from "../../src/errors.js";
import { BASE, fakeClock, KEY, useStrictNock } from "./helpers.js";

// The state lock's fence in the send path: beforeWrite runs immediately before a request that may
// change something leaves, after the rate limiter's and the retries' waits, so a holder whose lease
// lapsed while it waited (paused by SIGSTOP) sends nothing. Reads are never held back.

useStrictNock();

function fencedClient() {
  const clock = fakeClock();
  let held = true;
  const checks: string[] = [];
  const http = createHttpClient({
    baseUrl: BASE,
    auth: { scheme: "api-key", apiKey: KEY },
    clock,
    random: () => 0.5,
    // One request per 10 s: the second waits in the limiter.
    limiter: createRateLimiter({
      clock,
      categorize: () => ({ name: "t", limit: 3, windowMs: 10_000 }),
      burst: 1,
    }),
    retry: { baseDelayMs: 100, maxDelayMs: 1_000 },
    beforeWrite: () => {
      checks.push(held ? "held" : "lapsed");
      if (!held) throw new PlumbError("lock-lost", "lost the state lock (test)");
    },
  });
  return { http, clock, lapse: () => (held = false), checks };
}

it("a PATCH queued behind the rate limiter is not sent when the lease lapsed during the wait", async () => {
  const c = fencedClient();
  nock(BASE).patch("/v2/deployments/a").reply(200, {});
  await c.http.request({ method: "PATCH", path: "/v2/deployments/a", body: { x: 1 } });
  // The next one waits for a token; the lease lapses meanwhile (the process was stopped).
  const queued = c.http.request({ method: "PATCH", path: "/v2/deployments/a", body: { x: 2 } });
  c.lapse();
  await expect(queued).rejects.toMatchObject({ code: "lock-lost" });
  expect(c.checks).toEqual(["held", "lapsed"]);
});

it("a retry after a 429 is checked again before it leaves, and reads are never held back", async () => {
  const c = fencedClient();
  nock(BASE)
    .post("/v2/deployments")
    .reply(() => {
      c.lapse(); // lapses while the retry waits
      return [429, { detail: "slow down" }, { "retry-after": "1" }];
    });
  nock(BASE).get("/v2/deployments").reply(200, { resources: [] });
  await expect(c.http.request({ method: "POST", path: "/v2/deployments", body: {} })).rejects.toMatchObject({
    code: "lock-lost",
  });
  expect(c.checks).toEqual(["held", "lapsed"]);
  await c.http.request({ method: "GET", path: "/v2/deployments" });
  expect(c.checks).toHaveLength(2);
});
