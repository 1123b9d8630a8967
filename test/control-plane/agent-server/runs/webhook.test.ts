import { Client } from "@langchain/langgraph-sdk";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPlaneCommand, webhookHost } from "../../../../src/cli/control-plane/control-plane.js";
import { webhookProblem } from "../../../../src/control-plane/agent-server/runs/webhook.js";
import { DEFAULT_API_KEY } from "../../../../src/control-plane/options.js";
import { startControlPlane, type RunningControlPlane } from "../../../../src/control-plane/server.js";
import { createAgentDeployment } from "../test-context.js";

// A run's webhook, POSTed by the real control plane to a receiver on loopback when the run ends.
let cp: RunningControlPlane;
let sdk: Client;
let receiver: Server;
let receiverUrl: string;
/**
 * Bodies received per path; the path "/flaky" answers 503 to its first request, "/redirect" a 307
 * to "/elsewhere" (noted in `redirected` once the answer is sent).
 */
let redirected = 0;
const received = new Map<string, Array<Record<string, unknown>>>();

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      const path = request.url ?? "/";
      const bodies = received.get(path) ?? [];
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      received.set(path, bodies);
      if (path === "/redirect") {
        response.writeHead(307, { location: `${receiverUrl}/elsewhere` });
        response.end(() => (redirected += 1));
        return;
      }
      response.statusCode = path === "/flaky" && bodies.length === 1 ? 503 : 200;
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  cp = await startControlPlane({ runSeconds: 0, revisionSeconds: 0, deploymentReadySeconds: 0 });
  const id = await createAgentDeployment(cp.url, "webhooks");
  sdk = new Client({
    apiUrl: `${cp.url}/agents/${id}`,
    apiKey: DEFAULT_API_KEY,
    callerOptions: { maxRetries: 0 },
  });
});
afterAll(async () => {
  await cp?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const human = (content: string) => ({ messages: [{ role: "user", content }] });

describe("run webhooks", () => {
  it("POSTs the ended run with its values; a 503 is retried", async () => {
    const thread = await sdk.threads.create();
    const run = await sdk.runs.create(thread.thread_id, "agent", {
      input: human("ping"),
      webhook: `${receiverUrl}/flaky`,
    });
    await expect.poll(() => received.get("/flaky")?.length ?? 0, { timeout: 5000 }).toBe(2);
    const [first, second] = received.get("/flaky")!;
    expect(second).toEqual(first);
    expect(second).toMatchObject({
      run_id: run.run_id,
      thread_id: thread.thread_id,
      status: "success",
      values: { messages: [{ content: "ping" }, { content: "pong" }] },
      run_ended_at: expect.any(String),
    });
  });

  it("a failed run's webhook carries its error", async () => {
    const thread = await sdk.threads.create();
    await sdk.runs.create(thread.thread_id, "agent", {
      input: human("raise error"),
      webhook: `${receiverUrl}/failed`,
    });
    await expect.poll(() => received.get("/failed")?.length ?? 0, { timeout: 5000 }).toBe(1);
    expect(received.get("/failed")![0]).toMatchObject({
      status: "error",
      error: "the graph raised on request",
    });
  });

  it("does not follow a redirect (it could lead to any host)", async () => {
    const thread = await sdk.threads.create();
    await sdk.runs.create(thread.thread_id, "agent", {
      input: human("a"),
      webhook: `${receiverUrl}/redirect`,
    });
    await expect.poll(() => redirected, { timeout: 5000 }).toBe(1);
    // A later run's webhook arrives after the redirect was answered; a followed redirect comes
    // at once, within the first delivery, so it would be here by then.
    await sdk.runs.create(thread.thread_id, "agent", { input: human("b"), webhook: `${receiverUrl}/after` });
    await expect.poll(() => received.get("/after")?.length ?? 0, { timeout: 5000 }).toBe(1);
    expect(received.get("/redirect")).toHaveLength(1); // a 307 is an answer: not retried
    expect(received.get("/elsewhere")).toBeUndefined();
  });

  it("calls the hosts --webhook-allow-host names, and only those, beyond loopback", async () => {
    const allowed = ["hooks.example.test", "10.1.2.3", "::2"];
    for (const url of [
      "http://hooks.example.test/x",
      "https://HOOKS.example.test:8443/x",
      "http://10.1.2.3/x",
      "http://[::2]/x",
      "http://127.0.0.1/x",
    ])
      expect(webhookProblem(url, allowed)).toBeUndefined();
    for (const url of [
      "http://hooks.example.test.evil.test/x",
      "http://evil.test/hooks.example.test",
      "http://10.1.2.4/x",
      "http://u:p@hooks.example.test/x",
    ])
      expect(webhookProblem(url, allowed)).toBeDefined();
    expect(webhookProblem("http://hooks.example.test/x")).toBeDefined();
    // Through the real command: the flag makes the run's webhook acceptable (422 without it).
    let out = "";
    let stop!: (signal: string) => void;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    const command = controlPlaneCommand({ write: (t: string) => (out += t) }, () => stopped);
    const level = process.env.PLUMB_LOG_LEVEL;
    process.env.PLUMB_LOG_LEVEL = "silent";
    const running = command.parseAsync(
      ["--port", "0", "--run-seconds", "0", "--webhook-allow-host", "hooks.invalid"],
      { from: "user" },
    );
    try {
      await expect.poll(() => out, { interval: 5 }).toContain("state:");
      const url = /listening on (\S+)/.exec(out)?.[1] ?? "";
      const id = await createAgentDeployment(url, "allowed-hooks");
      const client = new Client({ apiUrl: `${url}/agents/${id}`, apiKey: DEFAULT_API_KEY });
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, "agent", {
        input: human("ping"),
        webhook: "http://hooks.invalid/run-ended",
      });
      expect((run as unknown as { kwargs: unknown }).kwargs).toMatchObject({
        webhook: "http://hooks.invalid/run-ended",
      });
      await expect(
        client.runs.create(thread.thread_id, "agent", {
          input: human("x"),
          webhook: "http://other.invalid/",
        }),
      ).rejects.toMatchObject({ status: 422 });
    } finally {
      stop("SIGTERM");
      await running;
      process.env.PLUMB_LOG_LEVEL = level;
    }
    expect(() => webhookHost("https://hooks.example.test/x")).toThrow(/--webhook-allow-host takes a host/);
    expect(webhookHost("[::2]")).toBe("[::2]");
  });

  it("refuses a webhook off loopback (422) and calls nothing", async () => {
    const thread = await sdk.threads.create();
    await expect(
      sdk.runs.create(thread.thread_id, "agent", { input: human("x"), webhook: "http://192.0.2.1/hook" }),
    ).rejects.toMatchObject({ status: 422 });
    for (const url of ["http://localhost:1/x", "http://127.0.0.2/x", "http://[::1]:8/x"])
      expect(webhookProblem(url)).toBeUndefined();
    for (const url of [
      "http://example.com/x",
      "ftp://127.0.0.1/x",
      "http://u:p@127.0.0.1/x",
      "http://127.0.0.1.example.com/",
    ])
      expect(webhookProblem(url)).toBeDefined();
  });
});
