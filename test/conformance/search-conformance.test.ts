import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type ConformanceTarget } from "./target.js";

// Assistant versions, select, threads.count and thread search options through
// @langchain/langgraph-sdk (docs/control-plane.md "Assistants").

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

describe("SDK conformance: assistant versions and select", () => {
  it("getVersions lists each version newest first; setLatest goes back to one", async () => {
    const created = await sdk.assistants.create({
      graphId: "agent",
      config: { configurable: { tone: "dry" } },
    });
    const updated = await sdk.assistants.update(created.assistant_id, {
      config: { configurable: { tone: "warm" } },
    });
    expect(updated.version).toBe(created.version + 1);
    const versions = await sdk.assistants.getVersions(created.assistant_id);
    expect(versions.map((v) => [v.version, v.config.configurable?.tone])).toEqual([
      [updated.version, "warm"],
      [created.version, "dry"],
    ]);
    const back = await sdk.assistants.setLatest(created.assistant_id, created.version);
    expect(back).toMatchObject({ version: created.version, config: { configurable: { tone: "dry" } } });
    expect((await sdk.assistants.get(created.assistant_id)).config).toMatchObject({
      configurable: { tone: "dry" },
    });
    const again = await sdk.assistants.update(created.assistant_id, { name: "third" });
    expect(again.version).toBe(updated.version + 1);
    expect(await sdk.assistants.getVersions(created.assistant_id, { limit: 1 })).toHaveLength(1);
  });

  it("search answers only the selected fields", async () => {
    const found = await sdk.assistants.search({ graphId: "agent", select: ["assistant_id", "name"] });
    expect(found.length).toBeGreaterThan(0);
    for (const assistant of found) expect(Object.keys(assistant).sort()).toEqual(["assistant_id", "name"]);
  });
});

describe("SDK conformance: thread search and count", () => {
  it("count, ids without duplicates, sortBy/sortOrder, select", async () => {
    const tag = `search-${Date.now()}`;
    const a = await sdk.threads.create({ metadata: { tag } });
    const b = await sdk.threads.create({ metadata: { tag } });
    expect(await sdk.threads.count({ metadata: { tag } })).toBe(2);
    expect(await sdk.threads.count({ metadata: { tag }, status: "busy" })).toBe(0);
    const byIds = await sdk.threads.search({ ids: [a.thread_id, b.thread_id, a.thread_id] });
    expect(byIds.map((t) => t.thread_id).sort()).toEqual([a.thread_id, b.thread_id].sort());
    const ascending = await sdk.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" });
    expect(ascending.map((t) => t.thread_id)).toEqual([a.thread_id, b.thread_id]);
    const descending = await sdk.threads.search({
      metadata: { tag },
      sortBy: "created_at",
      sortOrder: "desc",
    });
    expect(descending.map((t) => t.thread_id)).toEqual([b.thread_id, a.thread_id]);
    const selected = await sdk.threads.search({ metadata: { tag }, select: ["thread_id", "status"] });
    for (const thread of selected) expect(Object.keys(thread).sort()).toEqual(["status", "thread_id"]);
  });
});
