import { expect, it } from "vitest";
import { createHttpClient } from "../../src/api/transport/http.js";

// A URL on a port fetch refuses outright (the Fetch standard's "bad ports": 1, 22, 25, 6000, ...)
// fails at once with words that say so: no retries for five seconds behind "connection failed".

it("says a blocked port at once instead of retrying it", async () => {
  const attempts: number[] = [];
  const client = createHttpClient({
    baseUrl: "http://127.0.0.1:1",
    auth: { scheme: "api-key", apiKey: "k" },
    onResponse: (event) => attempts.push(event.attempt),
  });
  await expect(client.request({ method: "GET", path: "/v2/deployments" })).rejects.toMatchObject({
    code: "network",
    detail: expect.stringContaining("port blocked by fetch"),
  });
  expect(attempts).toEqual([1]);
});
