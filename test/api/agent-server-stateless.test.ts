import nock from "nock";
import { describe, expect, it } from "vitest";
import { createAgentServerClient } from "../../src/api/agent-server-client.js";
import { fakeClock, KEY, useStrictNock } from "./helpers.js";

// The stateless streamed run verify's cases use (POST /runs/stream, no thread in the path).

useStrictNock();

const AGENT = "http://agent.test/prefix";
const make = () => createAgentServerClient({ deploymentUrl: AGENT, apiKey: KEY, clock: fakeClock() });
const collect = async (stream: AsyncIterable<unknown>) => {
  const parts: unknown[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
};

describe("streamStatelessRun", () => {
  const body = {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content: "ping" }] },
    stream_mode: ["values", "messages-tuple"],
    on_disconnect: "cancel" as const,
  };

  it("posts the run under the deployment URL, with the key, and parses its events", async () => {
    nock(AGENT, { reqheaders: { "x-api-key": KEY } })
      .post(
        "/runs/stream",
        (sent: Record<string, unknown>) => sent.on_disconnect === "cancel" && !("multitask_strategy" in sent),
      )
      .reply(
        200,
        'event: values\ndata: {"messages":[{"type":"ai","content":"pong"}]}\n\nevent: end\ndata: null\n\n',
        {
          "content-type": "text/event-stream",
        },
      );
    expect(await collect(make().streamStatelessRun(body))).toEqual([
      { event: "values", data: { messages: [{ type: "ai", content: "pong" }] }, id: undefined },
      { event: "end", data: null, id: undefined },
    ]);
  });

  it("sends nothing until read, and throws the API error of a refused run", async () => {
    const client = make();
    const stream = client.streamStatelessRun(body); // strict nock: a request now would fail the test
    nock(AGENT).post("/runs/stream").reply(404, { detail: "Assistant agent not found." });
    await expect(collect(stream)).rejects.toMatchObject({ status: 404, code: "not-found" });
  });
});
