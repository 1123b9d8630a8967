import { describe, expect, it } from "vitest";
import { allowedOriginsFrom } from "../../../src/api/allowed-origins.js";
import { createAgentServerClient } from "../../../src/api/agent-server-client.js";
import { createHttpClient } from "../../../src/api/transport/http.js";
import { fakeClock } from "../../support/fake-clock.js";

// The transport refuses, unsent, a request that would carry the key to an origin the allowlist
// does not name (an agent server's URL comes from the manifests: an external container's
// custom_url); a request to another origin carries no key (a signed upload URL) and still goes.

const KEY = "test-key-0123456789abcdef";
const allowed = allowedOriginsFrom({ allowApiOrigin: ["https://api.example.com"] }, {});

function countingFetch() {
  const sent: { url: string; headers: Record<string, string> }[] = [];
  const fetch: typeof globalThis.fetch = async (url, init) => {
    sent.push({
      url: url instanceof Request ? url.url : url.toString(),
      headers: { ...(init?.headers as Record<string, string>) },
    });
    return new Response("{}", { headers: { "content-type": "application/json" } });
  };
  return { sent, fetch };
}

describe("the transport with an allowlist", () => {
  it("sends nothing to an agent server whose origin is not listed", async () => {
    const { sent, fetch } = countingFetch();
    const agent = createAgentServerClient({
      deploymentUrl: "https://agent.attacker.example/d1",
      apiKey: KEY,
      clock: fakeClock(),
      fetch,
      allowedOrigins: allowed,
    });
    await expect(agent.createThread({})).rejects.toMatchObject({
      code: "api-origin-not-allowed",
      message: expect.stringContaining("POST /threads not sent: https://agent.attacker.example is not"),
    });
    expect(sent).toEqual([]);
  });

  it("sends to a listed origin, with the key", async () => {
    const { sent, fetch } = countingFetch();
    const http = createHttpClient({
      baseUrl: "https://api.example.com:443/",
      auth: { scheme: "api-key", apiKey: KEY },
      clock: fakeClock(),
      fetch,
      allowedOrigins: allowed,
    });
    await http.request({ method: "GET", path: "/v2/deployments" });
    expect(sent.map((s) => [s.url, s.headers["x-api-key"]])).toEqual([
      ["https://api.example.com/v2/deployments", KEY],
    ]);
  });

  it("still sends a keyless request to another origin (a signed upload URL)", async () => {
    const { sent, fetch } = countingFetch();
    const http = createHttpClient({
      baseUrl: "https://api.example.com",
      auth: { scheme: "api-key", apiKey: KEY },
      clock: fakeClock(),
      fetch,
      allowedOrigins: allowed,
    });
    await http.request({ method: "PUT", path: "/upload", url: "https://storage.example/b?sig=1" });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers["x-api-key"]).toBeUndefined();
  });
});
