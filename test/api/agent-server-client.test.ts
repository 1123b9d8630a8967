import nock from "nock";
import { describe, expect, it } from "vitest";
import { createAgentServerClient } from "../../src/api/agent-server-client.js";
import { fakeClock, KEY, useStrictNock } from "./helpers.js";

useStrictNock();

const AGENT = "http://agent.test/prefix";
const make = () => createAgentServerClient({ deploymentUrl: AGENT, apiKey: KEY, clock: fakeClock() });

describe("getThread", () => {
  it("returns the thread, sending the key, under the deployment URL's path prefix", async () => {
    nock(AGENT, { reqheaders: { "x-api-key": KEY } })
      .get("/threads/t%201")
      .reply(200, { thread_id: "t 1", metadata: {} });
    expect(await make().getThread("t 1")).toMatchObject({ thread_id: "t 1" });
  });

  it("returns null for a thread that does not exist (404) and throws on other failures", async () => {
    nock(AGENT).get("/threads/gone").reply(404, { detail: "not found" });
    nock(AGENT).get("/threads/bad").reply(401, { detail: "no" });
    const client = make();
    expect(await client.getThread("gone")).toBeNull();
    await expect(client.getThread("bad")).rejects.toMatchObject({ code: "unauthorized" });
  });
});

describe("streamRun", () => {
  const body = { assistant_id: "agent", input: { messages: [] }, stream_mode: ["values"] };
  const collect = async (stream: AsyncIterable<unknown>) => {
    const parts: unknown[] = [];
    for await (const part of stream) parts.push(part);
    return parts;
  };

  it("posts the run and parses the event stream: JSON data, ids, comments skipped", async () => {
    const sse =
      'event: metadata\ndata: {"run_id":"r1","attempt":1}\nid: 1\n\n' +
      ": heartbeat\n\n" +
      'event: values\ndata: {"messages":[{"type":"ai","content":"pong"}]}\nid: 2\n\n' +
      "event: end\ndata: null\nid: 3\n\n";
    nock(AGENT, { reqheaders: { "x-api-key": KEY } })
      .post("/threads/t1/runs/stream", (sent: Record<string, unknown>) => sent.stream_mode !== undefined)
      .reply(200, sse, { "content-type": "text/event-stream; charset=utf-8" });
    expect(await collect(make().streamRun("t1", body))).toEqual([
      { event: "metadata", data: { run_id: "r1", attempt: 1 }, id: "1" },
      { event: "values", data: { messages: [{ type: "ai", content: "pong" }] }, id: "2" },
      { event: "end", data: null, id: "3" },
    ]);
  });

  it("throws the API error of a refused run, and unexpected-response for a body that is not a stream", async () => {
    nock(AGENT).post("/threads/busy/runs/stream").reply(409, { detail: "busy" });
    nock(AGENT).post("/threads/json/runs/stream").reply(200, { not: "a stream" });
    const client = make();
    await expect(collect(client.streamRun("busy", body))).rejects.toMatchObject({
      status: 409,
      code: "conflict",
    });
    await expect(collect(client.streamRun("json", body))).rejects.toMatchObject({
      code: "unexpected-response",
    });
  });

  /** An agent server streaming forever; `pulled` counts the bytes plumb asked for. */
  const endless = (piece: string) => {
    const counter = { pulled: 0 };
    const chunk = new TextEncoder().encode(piece.repeat(Math.ceil((1024 * 1024) / piece.length)));
    const fetch: typeof globalThis.fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('event: metadata\ndata: {"run_id":"r1"}\n\n'));
          },
          pull(controller) {
            counter.pulled += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    return { counter, client: createAgentServerClient({ deploymentUrl: AGENT, apiKey: KEY, fetch }) };
  };

  it("stops at an event past 16 MiB (one endless line, or data lines without the blank line ending it)", async () => {
    for (const piece of ["x", "data: x\n", "data: x\r\n"]) {
      const { counter, client } = endless(piece);
      const parts: unknown[] = [];
      const error = await (async () => {
        for await (const part of client.streamRun("t1", body)) parts.push(part);
      })().catch((e: unknown) => e);
      expect(error, piece).toMatchObject({ code: "unexpected-response" });
      expect(String(error)).toContain("an event larger than 16 MiB");
      expect(parts).toEqual([{ event: "metadata", data: { run_id: "r1" }, id: undefined }]);
      expect(counter.pulled).toBeLessThan(24 * 1024 * 1024);
    }
  });

  it("has no limit on the whole stream: 20 MiB of 64 KiB events are read", async () => {
    const { counter, client } = endless(`event: values\ndata: "${"x".repeat(64 * 1024)}"\n\n`);
    let seen = 0;
    for await (const part of client.streamRun("t1", body)) {
      if (part.event === "values") seen += 1;
      if (counter.pulled > 20 * 1024 * 1024) break;
    }
    expect(seen).toBeGreaterThan(200); // 16 MiB and more, in events of 64 KiB
  });
});
