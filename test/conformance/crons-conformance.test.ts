import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lacks, startTarget, type ConformanceTarget } from "./target.js";

// Crons through @langchain/langgraph-sdk, as the hosted service serves them (docs/control-plane.md
// "Crons"). The open-source dev server does not serve crons (400/404): skipped there.

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

describe.skipIf(lacks("crons"))("SDK conformance: crons (hosted service's API)", () => {
  it("create on a thread and stateless, search, count, update, delete", async () => {
    const thread = await sdk.threads.create();
    const onThread = await sdk.crons.createForThread(thread.thread_id, "agent", {
      schedule: "0 9 * * *",
      input: { messages: [{ role: "user", content: "ping" }] },
      metadata: { owner: "conformance" },
    });
    expect(onThread).toMatchObject({ thread_id: thread.thread_id, schedule: "0 9 * * *" });
    expect(Date.parse(onThread.next_run_date)).toBeGreaterThan(Date.now());
    const stateless = await sdk.crons.create("agent", { schedule: "*/10 * * * *", input: null });
    expect(stateless.thread_id).toBeNull();
    expect(await sdk.crons.count({ threadId: thread.thread_id })).toBe(1);
    const found = await sdk.crons.search({ assistantId: "agent", sortBy: "created_at", sortOrder: "asc" });
    expect(found.map((cron) => cron.cron_id)).toEqual(
      expect.arrayContaining([onThread.cron_id, stateless.cron_id]),
    );
    const updated = await sdk.crons.update(stateless.cron_id, { enabled: false });
    expect(updated).toMatchObject({ enabled: false, next_run_date: null });
    await sdk.crons.delete(onThread.cron_id);
    await sdk.crons.delete(stateless.cron_id);
    expect(await sdk.crons.count({ threadId: thread.thread_id })).toBe(0);
    await expect(sdk.crons.delete(onThread.cron_id)).rejects.toMatchObject({ status: 404 });
  });
});
