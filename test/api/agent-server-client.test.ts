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
