import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentServerClient } from "../../../src/api/agent-server-client.js";
import { createControlPlaneClient } from "../../../src/api/control-plane-client.js";
import { ApiError } from "../../../src/api/errors.js";
import { MAX_KEPT_DETAIL_CHARS } from "../../../src/api/transport/error-detail.js";
import { createHttpClient } from "../../../src/api/transport/http.js";

// plumb's clients against a real HTTP server that misbehaves (docs/api-client.md "A hostile
// server"): each answer here is what a broken proxy, a captive portal or an attacker who controls
// the API URL can send. Every wait ends on the client's own bound; the server counts what it saw.

const KEY = "hostile-test-key-0123456789";
type Handler = (request: IncomingMessage, response: ServerResponse) => void;
const servers: Array<{ close(): void; closeAllConnections(): void }> = [];

async function serve(handler: Handler): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

const deployment = (n: number, extra: Record<string, unknown> = {}) => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  tenant_id: "00000000-0000-4000-8000-000000000000",
  name: `d${n}`,
  source: "external_container",
  source_config: { custom_url: null },
  source_revision_config: { image_uri: "registry.test/app:1" },
  secrets: [],
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  status: "READY",
  latest_revision_id: null,
  active_revision_id: null,
  ...extra,
});

/** Pages of `limit` new deployments at every offset; after `lastPage` pages a short page ends the list. */
function endlessPages(lastPage: number, extra: Record<string, unknown> = {}): Handler {
  return (request, response) => {
    const query = new URL(request.url ?? "/", "http://x").searchParams;
    const offset = Number(query.get("offset") ?? 0);
    const limit = Number(query.get("limit") ?? 100);
    const size = offset / limit >= lastPage ? 1 : limit;
    const resources = Array.from({ length: size }, (_, i) => deployment(offset + i + 1, extra));
    json(response, 200, { resources, offset: offset + size });
  };
}

const client = (url: string, extra: Record<string, unknown> = {}) =>
  createControlPlaneClient({ apiUrl: url, apiKey: KEY, retry: { maxAttempts: 1 }, ...extra });

async function caught(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("a hostile server against plumb's clients", () => {
  it("stops a list of ever new pages at 50,000 items, naming the limit and the fix", async () => {
    // Pages of 1,000 (the client's page size) keep the test short; 100,000 items if never stopped.
    const server = await serve(endlessPages(100));
    const error = await caught(client(server.url, { pageSize: 1_000 }).listDeployments());
    expect(error.code).toBe("unexpected-response");
    expect(error.message).toContain("the list passed 50,000 items");
    expect(error.message).toContain("PLUMB_API_URL");
    expect(server.requests.length).toBeLessThanOrEqual(51);
  }, 60_000);

  it("stops a list of fat pages at 64 MiB of items", async () => {
    // 10 MB a page, 100 MB if never stopped.
    const server = await serve(endlessPages(10, { padding: "x".repeat(100_000) }));
    const error = await caught(client(server.url).listDeployments());
    expect(error.message).toContain("the list passed 64 MiB");
    expect(server.requests.length).toBeLessThanOrEqual(7);
  }, 60_000);

  it("refuses an answer nested 10,000 deep before anything walks it", async () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const body = JSON.stringify(deployment(1)).replace(/}$/, `,"extra":${deep}}`);
    const server = await serve((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end(body),
    );
    const error = await caught(client(server.url).getDeployment(deployment(1).id));
    expect(error.code).toBe("unexpected-response");
    expect(error.message).toContain("JSON nested deeper than 128 levels");
  });

  it("refuses a streamed event nested 10,000 deep", async () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const server = await serve((_request, response) =>
      response
        .writeHead(200, { "content-type": "text/event-stream" })
        .end(`event: values\ndata: ${deep}\n\n`),
    );
    const agent = createAgentServerClient({
      deploymentUrl: server.url,
      apiKey: KEY,
      retry: { maxAttempts: 1 },
    });
    const parts = agent.streamStatelessRun({
      assistant_id: "agent",
      input: { messages: [] },
      stream_mode: ["values"],
    });
    const error = await caught(
      (async () => {
        for await (const part of parts) JSON.stringify(part);
      })(),
    );
    expect(error.message).toContain("an event's JSON nested deeper than 128 levels");
  });

  it("names the content type of an answer that is not JSON (a login page)", async () => {
    const server = await serve((_request, response) =>
      response.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>"),
    );
    const error = await caught(client(server.url).getDeployment(deployment(1).id));
    expect(error.code).toBe("unexpected-response");
    expect(error.message).toContain("not JSON but text/html");
  });

  it("ends a body that never ends (slow loris) at the attempt's timeout", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write("[");
      const drip = setInterval(() => response.write(" "), 20);
      response.on("close", () => clearInterval(drip));
    });
    const error = await caught(client(server.url, { timeoutMs: 500 }).getDeployment(deployment(1).id));
    expect(error.code).toBe("timeout");
  });

  it("keeps 2,000 characters of a huge error detail and 100 of its issues", async () => {
    const server = await serve((request, response) =>
      request.url?.includes("many")
        ? json(response, 422, {
            detail: Array.from({ length: 20_000 }, (_, i) => ({ loc: ["body", i], msg: "bad", type: "x" })),
          })
        : json(response, 400, { detail: `${"x".repeat(1_000_000)}${KEY}` }),
    );
    const http = createHttpClient({ baseUrl: server.url, auth: { scheme: "api-key", apiKey: KEY } });
    const huge = await caught(http.request({ method: "GET", path: "/huge" }));
    expect(huge.message.length).toBeLessThan(3_000);
    expect(huge.message).toContain("more characters)");
    const many = await caught(http.request({ method: "GET", path: "/many" }));
    expect(many.detail).toHaveLength(101); // 100 issues and the note of what was left out
    expect(many.message).toContain("… 19900 more issues left out");
  });

  it("bounds a 422's issues as a whole, after redaction, and says how much was left out", async () => {
    // Each part under the 2,000 a part keeps, under the 1 MiB an error body may be: ~850 KB were kept.
    const long = `${KEY}${"g".repeat(1_900)}`;
    const issue = { loc: ["body", long, long, long], msg: long, type: "x" };
    const server = await serve((_request, response) =>
      json(response, 422, { detail: Array.from({ length: 100 }, () => issue) }),
    );
    const http = createHttpClient({ baseUrl: server.url, auth: { scheme: "api-key", apiKey: KEY } });
    const error = await caught(http.request({ method: "GET", path: "/wide" }));
    const kept = JSON.stringify(error.detail);
    expect(kept.length).toBeLessThan(MAX_KEPT_DETAIL_CHARS + 1_000);
    expect(error.message.length).toBeLessThan(MAX_KEPT_DETAIL_CHARS + 1_000);
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain("[redacted]");
    expect(error.message).toMatch(/… 99 more issues left out, and \d+ characters of those kept/);
  });

  it("never carries the key to where a redirect points", async () => {
    const elsewhere = await serve((_request, response) => json(response, 200, deployment(1)));
    const server = await serve((_request, response) =>
      response.writeHead(302, { location: `${elsewhere.url}/v2/deployments/x` }).end(),
    );
    const http = createHttpClient({ baseUrl: server.url, auth: { scheme: "api-key", apiKey: KEY } });
    const error = await caught(http.request({ method: "GET", path: "/v2/deployments/x" }));
    expect(error.status).toBe(302);
    expect(error.message).toContain(`redirect to ${elsewhere.url} not followed`);
    expect(elsewhere.requests).toEqual([]);
  });
});
