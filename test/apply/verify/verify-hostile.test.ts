import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createApplyPorts } from "../../../src/apply/api/api-adapter.js";
import { runChecks } from "../../../src/apply/verify/verify-checks.js";
import { answerText, MAX_KEPT_TEXT } from "../../../src/apply/verify/verify-stream.js";
import { createSecretRedactor } from "../../../src/api/secret-redactor.js";
import { systemClock } from "../../../src/clock.js";
import type { Verify } from "../../../src/schema/manifest.js";

// Verify against a real agent server that misbehaves: its run's `error` event carries 1 MiB (one
// event may hold 16 MiB). What plumb keeps of it (the result's message, each run's reason, the
// checks' failures) is clipped to MAX_KEPT_TEXT after the redactor. It was kept whole: an apply
// against such a server printed 8 MB and wrote an 8 MB status record.

const KEY = "hostile-verify-key-0123456789abcdef";
const servers: Array<{ close(): void; closeAllConnections(): void }> = [];

afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** An agent server whose every run fails with an `error` event of `message`. */
async function failingAgent(message: string): Promise<string> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      if (request.url?.endsWith("/runs/stream")) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write('event: metadata\ndata: {"run_id":"r1"}\n\n');
        response.end(`event: error\ndata: ${JSON.stringify({ error: "Boom", message })}\n\n`);
      } else if (request.url?.endsWith("/threads")) {
        response.writeHead(200, { "content-type": "application/json" }).end('{"thread_id":"t1"}');
      } else response.writeHead(404, { "content-type": "application/json" }).end('{"detail":"no"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("verify against an agent server whose run error is 1 MiB", () => {
  it("keeps at most MAX_KEPT_TEXT characters of it, redacted before the clip", async () => {
    // The API key straddles the clip, 5 of its characters before it: clipped first, those would be
    // kept (the redactor finds a cut secret by 8 characters or more).
    const prefix = "the run failed: Boom: ";
    const message = `${"x".repeat(MAX_KEPT_TEXT - prefix.length - 5)}${KEY}${"y".repeat(1024 * 1024)}`;
    const url = await failingAgent(message);
    const { agentServer } = createApplyPorts({
      api: { apiUrl: url, apiKey: KEY, platformUrl: url },
      clock: systemClock,
    });
    const spec: Verify = {
      assistant_id: "agent",
      input: { messages: [{ role: "user", content: "ping" }] },
      cases: [{ name: "ping", input: "ping" }],
      timeout_seconds: 30,
    };
    const result = await runChecks(url, spec, null, {
      agent: agentServer!,
      clock: systemClock,
      name: "edge",
      revisionId: "rev-1",
      budgetMs: 60_000,
    });
    expect(result.ok).toBe(false);
    const kept = [
      result.message,
      ...(result.runs ?? []).map((r) => r.reason ?? ""),
      ...(result.checks?.failures ?? []).map((f) => f.reason),
    ];
    expect(result.runs).toHaveLength(2);
    for (const text of kept) {
      expect(text.length).toBeLessThan(MAX_KEPT_TEXT + 200);
      expect(text).not.toContain(KEY.slice(0, 5));
    }
    expect(result.runs![0]!.reason).toMatch(/^the run failed: Boom: x{1973}\[reda… \(\d+ more characters\)$/);
    expect(JSON.stringify(result).length).toBeLessThan(6 * MAX_KEPT_TEXT);
  });
});

describe("the answer kept in a result", () => {
  it("is redacted whole, then cut to 200 characters: no part of a secret across the cut is shown", () => {
    const redactor = createSecretRedactor([KEY]);
    // 5 characters of the key before the cut: too few for the redactor to know as a cut secret.
    const content = `${"a".repeat(195)}${KEY} and more`;
    const text = answerText([{ type: "ai", content }], (t) => redactor.redact(t));
    expect(text).toBe(`${"a".repeat(195)}[reda…`);
  });
});
