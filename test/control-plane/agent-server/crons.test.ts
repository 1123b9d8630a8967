import { describe, expect, it } from "vitest";
import { createAgentServerModule } from "../../../src/control-plane/agent-server/index.js";
import { buildApp, manualClock, testContext } from "./test-context.js";

// Crons on the injected clock (starting 2026-01-01T00:00:00Z): each tick creates the cron's run.
const headers = { "x-api-key": "key-acme" };
const base = "/agents/dep-1";
const MINUTE = 60_000;

describe("crons", () => {
  it("a thread cron runs at each tick; patch, search, count, delete; restored crons tick on", async () => {
    const clock = manualClock();
    const context = testContext({ clock, runSeconds: 1 });
    const module = createAgentServerModule(context);
    const app = await buildApp(context, [module]);
    const call = async (method: "POST" | "PATCH" | "DELETE" | "GET", url: string, payload?: object) => {
      const response = await app.inject({ method, url: base + url, headers, ...(payload && { payload }) });
      return {
        status: response.statusCode,
        body: response.body === "" ? null : response.json<unknown>(),
      };
    };
    const { thread_id: tid } = (await call("POST", "/threads", {})).body as { thread_id: string };
    const created = await call("POST", `/threads/${tid}/runs/crons`, {
      assistant_id: "agent",
      schedule: "*/5 * * * *",
      input: { messages: [{ role: "user", content: "ping" }] },
      metadata: { job: "poll" },
    });
    expect(created.status).toBe(200);
    const cron = created.body as { cron_id: string; next_run_date: string; thread_id: string };
    expect(cron).toMatchObject({ thread_id: tid, next_run_date: "2026-01-01T00:05:00.000Z" });
    const runs = async () => (await call("GET", `/threads/${tid}/runs`)).body as Array<{ status: string }>;
    await clock.advance(4 * MINUTE);
    expect(await runs()).toHaveLength(0);
    await clock.advance(MINUTE);
    await clock.advance(1000);
    expect((await runs()).map((r) => r.status)).toEqual(["success"]);

    expect((await call("POST", "/runs/crons/count", { thread_id: tid })).body).toBe(1);
    const found = (
      await call("POST", "/runs/crons/search", { thread_id: tid, select: ["cron_id", "schedule"] })
    ).body as Array<Record<string, unknown>>;
    expect(found).toEqual([{ cron_id: cron.cron_id, schedule: "*/5 * * * *" }]);
    const patched = await call("PATCH", `/runs/crons/${cron.cron_id}`, { schedule: "0 * * * *" });
    expect(patched.body).toMatchObject({ next_run_date: "2026-01-01T01:00:00.000Z" });
    expect(
      (await call("POST", "/runs/crons", { assistant_id: "agent", schedule: "not a cron" })).status,
    ).toBe(422);
    expect((await call("POST", "/runs/crons", { assistant_id: "nope", schedule: "* * * * *" })).status).toBe(
      404,
    );

    // What --data holds, restored in a new server: the cron ticks on there.
    const saved = JSON.parse(JSON.stringify(context.commits.at(-1))) as Record<string, unknown>;
    await app.close();
    const second = testContext({ clock, runSeconds: 1 });
    const restored = createAgentServerModule(second);
    restored.state.restore(saved["agent-server"]);
    const app2 = await buildApp(second, [restored]);
    await clock.advance(55 * MINUTE);
    await clock.advance(1000);
    const after = await app2.inject({ method: "GET", url: `${base}/threads/${tid}/runs`, headers });
    expect(after.json<unknown[]>().length).toBe(2);
    const deleted = await app2.inject({
      method: "DELETE",
      url: `${base}/runs/crons/${cron.cron_id}`,
      headers,
    });
    expect(deleted.statusCode).toBe(204);
    await clock.advance(60 * MINUTE);
    const later = await app2.inject({ method: "GET", url: `${base}/threads/${tid}/runs`, headers });
    expect(later.json<unknown[]>().length).toBe(2);
    await app2.close();
  });
});
