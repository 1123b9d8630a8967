import type { Client, Config } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lacks, startTarget, type ConformanceTarget } from "./target.js";

// State edits and checkpoints through @langchain/langgraph-sdk (docs/control-plane.md "Thread
// history"): threads.updateState with asNode, getState at a checkpoint, history with the input
// checkpoint and its filters, a run forked from a checkpoint, supersteps on create.

type Message = { type: string; content: unknown };

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

const human = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (values: unknown) =>
  ((values as { messages?: Message[] } | null)?.messages ?? []).map((m) => `${m.type}:${String(m.content)}`);

async function held<T>(pending: Promise<T>): Promise<T> {
  await target.untilHeld(1);
  target.release();
  return pending;
}

async function threadWithRun(content: string) {
  const thread = await sdk.threads.create();
  await held(sdk.runs.wait(thread.thread_id, "agent", { input: human(content) }));
  return thread.thread_id;
}

describe("SDK conformance: state and checkpoints", () => {
  it("updateState as a node adds a checkpoint; getState reads any checkpoint", async () => {
    const tid = await threadWithRun("ping");
    const before = await sdk.threads.getState(tid);
    const updated = await sdk.threads.updateState(tid, {
      values: { messages: [{ role: "assistant", content: "edited" }] },
      asNode: "agent",
    });
    expect(updated).toEqual({
      checkpoint: { thread_id: tid, checkpoint_ns: "", checkpoint_id: expect.any(String) },
    });
    const after = await sdk.threads.getState(tid);
    expect(texts(after.values)).toEqual(["human:ping", "ai:pong", "ai:edited"]);
    expect(after.next).toEqual([]);
    expect(after.metadata).toMatchObject({ source: "update" });
    const old = await sdk.threads.getState(tid, before.checkpoint.checkpoint_id!);
    expect(texts(old.values)).toEqual(["human:ping", "ai:pong"]);
    const viaBody = await sdk.threads.getState(tid, { ...before.checkpoint, checkpoint_ns: "" });
    expect(viaBody.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    const unknown = sdk.threads.getState(tid, "1f000000-0000-6000-8000-000000000000");
    if (target.unknownCheckpoint === 404) await expect(unknown).rejects.toMatchObject({ status: 404 });
    else expect(await unknown).toMatchObject({ values: {}, next: [], created_at: null });
  });

  it.skipIf(lacks("patchState"))("patchState merges metadata into the newest checkpoint's", async () => {
    const tid = await threadWithRun("ping");
    await sdk.threads.updateState(tid, { values: { messages: [] }, asNode: "agent" });
    await sdk.threads.patchState(tid, { reviewed: true });
    expect((await sdk.threads.getState(tid)).metadata).toMatchObject({ reviewed: true, source: "update" });
  });

  it("updateState from __start__ makes the first node due; a thread without a graph is 400", async () => {
    const bare = await sdk.threads.create();
    await expect(sdk.threads.updateState(bare.thread_id, { values: human("ping") })).rejects.toMatchObject({
      status: 400,
    });
    const thread = await sdk.threads.create({ graphId: "agent" });
    await sdk.threads.updateState(thread.thread_id, { values: human("ping"), asNode: "__start__" });
    const state = await sdk.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["agent"]);
    const resumed = await held(sdk.runs.wait(thread.thread_id, "agent", { input: null }));
    expect(texts(resumed)).toEqual(["human:ping", "ai:pong"]);
  });

  it("history: the input checkpoint at step -1, before, limit and a metadata filter", async () => {
    const tid = await threadWithRun("hello");
    const history = await sdk.threads.getHistory(tid);
    const oldest = history.at(-1)!;
    expect(oldest.metadata).toMatchObject({ source: "input", step: -1 });
    expect(oldest.next).toEqual(["__start__"]);
    expect(history[0]!.metadata).toMatchObject({ source: "loop" });
    const inputs = await sdk.threads.getHistory(tid, { metadata: { source: "input" } });
    expect(inputs.map((state) => state.checkpoint.checkpoint_id)).toEqual([oldest.checkpoint.checkpoint_id]);
    // The open-source server takes `before` as a checkpoint id (the SDK's type says a config).
    const before = history[0]!.checkpoint.checkpoint_id as unknown as Config;
    const older = await sdk.threads.getHistory(tid, { before, limit: 1 });
    expect(older.map((state) => state.checkpoint.checkpoint_id)).toEqual([
      history[1]!.checkpoint.checkpoint_id,
    ]);
  });

  it.skipIf(lacks("beforeConfig"))("history before as a config, as the SDK types it", async () => {
    const tid = await threadWithRun("hello");
    const history = await sdk.threads.getHistory(tid);
    const before = { configurable: { checkpoint_id: history[0]!.checkpoint.checkpoint_id } };
    const older = await sdk.threads.getHistory(tid, { before, limit: 1 });
    expect(older.map((state) => state.checkpoint.checkpoint_id)).toEqual([
      history[1]!.checkpoint.checkpoint_id,
    ]);
  });

  it("a run with checkpointId forks from that checkpoint", async () => {
    const tid = await threadWithRun("first");
    const history = await sdk.threads.getHistory(tid);
    const start = history.at(-1)!; // before the first input
    const forked = await held(
      sdk.runs.wait(tid, "agent", { input: human("second"), checkpointId: start.checkpoint.checkpoint_id! }),
    );
    expect(texts(forked)).toEqual(["human:second", "ai:second"]);
    expect(texts((await sdk.threads.getState(tid)).values)).toEqual(["human:second", "ai:second"]);
  });

  it("supersteps on create give the thread a past", async () => {
    const thread = await sdk.threads.create({
      graphId: "agent",
      supersteps: [
        { updates: [{ values: human("hi"), asNode: "__start__" }] },
        { updates: [{ values: { messages: [{ role: "assistant", content: "hello" }] }, asNode: "agent" }] },
      ],
    });
    const state = await sdk.threads.getState(thread.thread_id);
    expect(texts(state.values)).toEqual(["human:hi", "ai:hello"]);
    expect(state.next).toEqual([]);
    expect((await sdk.threads.getHistory(thread.thread_id)).length).toBeGreaterThanOrEqual(2);
  });
});
