import { describe, expect, it } from "vitest";
import { createAgentServerModule } from "../../../src/control-plane/agent-server/index.js";
import { buildApp, manualClock, testContext } from "./test-context.js";

const headers = { "x-api-key": "key-acme" };
const base = "/agents/dep-1";

describe("agent server state across a restart", () => {
  it("keeps threads, finished runs and messages, and resumes a run that was in progress", async () => {
    const clock = manualClock();
    const first = testContext({ clock });
    const module = createAgentServerModule(first);
    const app = await buildApp(first, [module]);
    const threadId = (
      await app.inject({ method: "POST", url: `${base}/threads`, headers, payload: {} })
    ).json().thread_id as string;
    const runBody = (content: string) => ({
      assistant_id: "agent",
      input: { messages: [{ role: "human", content }] },
    });
    const done = (
      await app.inject({
        method: "POST",
        url: `${base}/threads/${threadId}/runs`,
        headers,
        payload: runBody("ping"),
      })
    ).json();
    await clock.advance(1000);
    const running = (
      await app.inject({
        method: "POST",
        url: `${base}/threads/${threadId}/runs`,
        headers,
        payload: runBody("again"),
      })
    ).json();
    // What --data holds: the JSON of the last commit.
    const saved = JSON.parse(JSON.stringify(first.commits.at(-1))) as Record<string, unknown>;
    await app.close();

    const second = testContext({ clock });
    const restored = createAgentServerModule(second);
    restored.state.restore(saved["agent-server"]);
    const app2 = await buildApp(second, [restored]);
    type Json = { status: string; values: { messages: Array<{ content: string }> } };
    const get = async (url: string) =>
      (await app2.inject({ method: "GET", url: base + url, headers })).json<Json>();
    expect((await get(`/threads/${threadId}/runs/${done.run_id}`)).status).toBe("success");
    expect((await get(`/threads/${threadId}/runs/${running.run_id}`)).status).toBe("running");
    await clock.advance(1000);
    expect((await get(`/threads/${threadId}/runs/${running.run_id}`)).status).toBe("success");
    const messages = (await get(`/threads/${threadId}/state`)).values.messages.map(
      (m: { content: string }) => m.content,
    );
    expect(messages).toEqual(["ping", "pong", "again", "again"]);
    await app2.close();
  });

  it("starts empty without saved data and refuses unreadable data with an actionable error", () => {
    const module = createAgentServerModule(testContext());
    module.state.restore(undefined);
    expect(module.state.snapshot()).toEqual({
      version: 1,
      deployments: {},
      assistants: {},
      store: {},
      crons: {},
    });
    expect(() => module.state.restore({ version: 9 })).toThrow(/move the data directory aside/);
  });
});
