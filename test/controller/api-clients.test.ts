import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import { parseRateLimit } from "../../src/cli/flag-values.js";
import { createControllerClients } from "../../src/controller/api-clients.js";

// The controller's request budget: the default keeps under the API's 1000 requests / 10 s; a control
// plane that grants the key more can be used at that pace (--api-rate-limit).

/** Time moves only when the limiter sleeps. */
function virtualClock(): Clock {
  let now = 0;
  return {
    now: () => now,
    sleep: (ms) => {
      now += ms;
      return Promise.resolve();
    },
  };
}

const emptyPage = () =>
  Promise.resolve(
    new Response(JSON.stringify({ resources: [], offset: 0 }), {
      status: 200,
      headers: { "content-type": "application/json" },
    }),
  );

/** Sends `count` list requests; returns how many waited for the limiter and the virtual time spent. */
async function send(count: number, rateLimit?: { limit: number; windowMs: number }) {
  const clock = virtualClock();
  const clients = createControllerClients({
    api: { apiUrl: "http://cp.invalid", apiKey: "k", platformUrl: "http://cp.invalid" },
    clock,
    onResponse: () => undefined,
    fetch: emptyPage,
    rateLimit,
  });
  for (let i = 0; i < count; i++) await clients.controlPlane.listDeploymentsPage({});
  return { waited: clients.controlPlane.http.limiter.stats().waited, elapsedMs: clock.now() };
}

describe("controller API budget", () => {
  it("keeps under 1000 requests per 10 s by default, and under a configured budget when given", async () => {
    const byDefault = await send(2_000);
    expect(byDefault.waited).toBeGreaterThan(1_000);
    // 2,000 requests at most 990 per 10 s (99% of the limit): more than 10 s of waiting.
    expect(byDefault.elapsedMs).toBeGreaterThan(10_000);

    // Raised to 100,000 per 10 s: 2,000 requests pass at that pace (~10 per ms after a burst of 1,000).
    const raised = await send(2_000, { limit: 100_000, windowMs: 10_000 });
    expect(raised.elapsedMs).toBeLessThan(200);

    const lowered = await send(5, { limit: 20, windowMs: 60_000 });
    expect(lowered.waited).toBe(4); // a burst of one token, then one every 60 s / 18
    expect(lowered.elapsedMs).toBeGreaterThan(4 * 3_000);
  });

  it("parses --api-rate-limit as requests per window", () => {
    expect(parseRateLimit("1000/10s")).toEqual({ limit: 1000, windowMs: 10_000 });
    expect(parseRateLimit("50000/1m")).toEqual({ limit: 50_000, windowMs: 60_000 });
    for (const bad of ["1000", "5/10s", "1000/", "abc/10s", "10/10s/1", "100/0s"])
      expect(() => parseRateLimit(bad), bad).toThrow(/requests per window|longer than 0|duration/);
  });
});
