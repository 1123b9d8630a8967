import { describe, expect, it } from "vitest";
import { createAgentServerModule } from "../../../src/control-plane/agent-server/index.js";
import { buildApp, manualClock, testContext } from "./test-context.js";

// after_seconds on the injected clock: a delayed run stays pending until it is due, and a run
// created after it but due first starts first.
const headers = { "x-api-key": "key-acme" };
const base = "/agents/dep-1";

describe("after_seconds", () => {
  it("keeps the run pending until due; runs due earlier go first", async () => {
    const clock = manualClock();
    const context = testContext({ clock, runSeconds: 1 });
    const app = await buildApp(context, [createAgentServerModule(context)]);
    const post = async (url: string, payload: object) =>
      (await app.inject({ method: "POST", url: base + url, headers, payload })).json<{
        run_id: string;
        thread_id: string;
      }>();
    const status = async (threadId: string, runId: string) =>
      (await app.inject({ method: "GET", url: `${base}/threads/${threadId}/runs/${runId}`, headers })).json<{
        status: string;
      }>().status;
    const { thread_id: tid } = await post("/threads", {});
    const body = (content: string, after?: number) => ({
      assistant_id: "agent",
      input: { messages: [{ role: "user", content }] },
      ...(after !== undefined && { after_seconds: after }),
    });
    const late = await post(`/threads/${tid}/runs`, body("late", 10));
    const now = await post(`/threads/${tid}/runs`, body("now"));
    expect(await status(tid, late.run_id)).toBe("pending");
    expect(await status(tid, now.run_id)).toBe("running");
    await clock.advance(1000);
    expect(await status(tid, now.run_id)).toBe("success");
    await clock.advance(8000);
    expect(await status(tid, late.run_id)).toBe("pending");
    await clock.advance(1000);
    expect(await status(tid, late.run_id)).toBe("running");
    await clock.advance(1000);
    expect(await status(tid, late.run_id)).toBe("success");
    const refused = await app.inject({
      method: "POST",
      url: `${base}/threads/${tid}/runs`,
      headers,
      payload: body("x", -1),
    });
    expect(refused.statusCode).toBe(422);
    await app.close();
  });
});
