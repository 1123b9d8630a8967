import type { Client } from "@langchain/langgraph-sdk";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type ConformanceTarget } from "./target.js";

// A run's webhook through @langchain/langgraph-sdk (docs/control-plane.md "Webhooks"): the body
// the server POSTs when the run ends, to a receiver on loopback.

/** A message as plumb sends it, or LangChain's serialised form the open-source server's webhook sends. */
type Message = { content?: unknown; kwargs?: { content?: unknown } };

let target: ConformanceTarget;
let sdk: Client;
let receiver: Server;
let hookUrl: string;
const received = new Map<string, Array<Record<string, unknown>>>();

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      const path = request.url ?? "/";
      received.set(path, [...(received.get(path) ?? []), JSON.parse(text) as Record<string, unknown>]);
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => {
  await target?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const human = (content: string) => ({ messages: [{ role: "user", content }] });
const contents = (values: unknown) =>
  ((values as { messages?: Message[] }).messages ?? []).map((m) => String((m.kwargs ?? m).content));

async function hookOf(content: string, path: string): Promise<Record<string, unknown>> {
  const thread = await sdk.threads.create();
  const run = await sdk.runs.create(thread.thread_id, "agent", {
    input: human(content),
    webhook: hookUrl + path,
  });
  await target.untilHeld(1);
  target.release();
  await expect.poll(() => received.get(path)?.length ?? 0, { timeout: target.settleMs }).toBe(1);
  const body = received.get(path)![0]!;
  expect(body).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id });
  return body;
}

describe("SDK conformance: webhooks", () => {
  it("POSTs the ended run, its times and the state's values; a failed run's error", async () => {
    const ok = await hookOf("ping", "/ok");
    expect(ok).toMatchObject({
      status: "success",
      run_started_at: expect.any(String),
      run_ended_at: expect.any(String),
      webhook_sent_at: expect.any(String),
    });
    expect(contents(ok.values)).toEqual(["ping", "pong"]);
    expect(ok).not.toHaveProperty("error");
    const failed = await hookOf("raise error", "/failed");
    expect(failed).toMatchObject({ status: "error", error: "the graph raised on request" });
  });
});
