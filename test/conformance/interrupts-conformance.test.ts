import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type ConformanceTarget } from "./target.js";

// Human-in-the-loop as a chat UI drives it with @langchain/langgraph-sdk (docs/control-plane.md
// "Interrupts"): breakpoints, the graph's `review` node that calls interrupt() on "approve?",
// and the ways to continue (input null, command resume / update / goto).

type Message = { type: string; content: unknown };
type Part = { event: string; data: unknown };

let target: ConformanceTarget;
let sdk: Client;
beforeAll(async () => {
  target = await startTarget();
  sdk = target.client();
});
afterAll(async () => target?.stop());

const human = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (values: unknown) =>
  ((values as { messages?: Message[] }).messages ?? []).map((m) => `${m.type}:${String(m.content)}`);

/** Waits for a run while the test holds it, then lets it finish. */
async function held<T>(pending: Promise<T>): Promise<T> {
  await target.untilHeld(1);
  target.release();
  return pending;
}

describe("SDK conformance: interrupts", () => {
  it("interruptBefore stops before the node; input null runs it", async () => {
    const thread = await sdk.threads.create();
    const stopped = await sdk.runs.wait(thread.thread_id, "agent", {
      input: human("hello"),
      interruptBefore: ["agent"],
    });
    // The last values frame: the breakpoint's (empty) interrupts, not the state.
    expect(stopped).toEqual({ __interrupt__: [] });
    const interrupted = await sdk.threads.get(thread.thread_id);
    expect(interrupted.status).toBe("interrupted");
    expect(Object.values(interrupted.interrupts)).toEqual([[]]);
    expect(texts(interrupted.values)).toEqual(["human:hello"]);
    const state = await sdk.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["agent"]);
    expect(state.tasks.map((task) => task.name)).toEqual(["agent"]);
    const [run] = await sdk.runs.list(thread.thread_id);
    expect(run?.status).toBe("success");
    const resumed = await held(sdk.runs.wait(thread.thread_id, "agent", { input: null }));
    expect(texts(resumed)).toEqual(["human:hello", "ai:hello"]);
    expect((await sdk.threads.get(thread.thread_id)).status).toBe("idle");
    expect((await sdk.threads.getState(thread.thread_id)).next).toEqual([]);
  });

  it("interruptAfter on the last node: success, the thread interrupted with nothing due; input null ends it", async () => {
    const thread = await sdk.threads.create();
    const tid = thread.thread_id;
    const stopped = await held(
      sdk.runs.wait(tid, "agent", { input: human("hello"), interruptAfter: ["agent"] }),
    );
    expect(stopped).toEqual({ __interrupt__: [] });
    const interrupted = await sdk.threads.get(tid);
    expect(interrupted.status).toBe("interrupted");
    expect(Object.values(interrupted.interrupts)).toEqual([[]]);
    // (The open-source server's thread `values` lag here, at the state before the node.)
    const state = await sdk.threads.getState(tid);
    expect(texts(state.values)).toEqual(["human:hello", "ai:hello"]);
    expect([state.next, state.tasks]).toEqual([[], []]);
    expect((await sdk.runs.list(tid)).map((run) => run.status)).toEqual(["success"]);
    // Nothing is due: input null runs no node, answers the state and the thread is idle again.
    const after = await sdk.runs.wait(tid, "agent", { input: null });
    expect(texts(after)).toEqual(["human:hello", "ai:hello"]);
    expect((await sdk.threads.get(tid)).status).toBe("idle");
    // Streamed: the node's update, then the breakpoint's.
    const parts: Part[] = [];
    const streamed = (async () => {
      for await (const part of sdk.runs.stream(tid, "agent", {
        input: human("ping"),
        interruptAfter: "*",
        streamMode: ["updates"],
      }))
        parts.push(part);
    })();
    await held(streamed);
    const updates = parts.filter((part) => part.event === "updates").map((part) => part.data);
    expect(updates).toEqual([
      { agent: { messages: [expect.objectContaining({ type: "ai", content: "pong" })] } },
      { __interrupt__: [] },
    ]);
  });

  it("interrupt() in the review node: __interrupt__, thread interrupts, resume with a value", async () => {
    const thread = await sdk.threads.create();
    const waited = await held(sdk.runs.wait(thread.thread_id, "agent", { input: human("approve?") }));
    const raised = (waited as { __interrupt__?: Array<{ value: unknown; id: string }> }).__interrupt__;
    expect(raised).toEqual([{ value: { question: "Approve this request?" }, id: expect.any(String) }]);
    const interrupted = await sdk.threads.get(thread.thread_id);
    expect(interrupted.status).toBe("interrupted");
    expect(Object.values(interrupted.interrupts).flat()).toEqual(raised);
    const state = await sdk.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["review"]);
    expect(state.tasks[0]?.interrupts).toEqual(raised);
    const resumed = await held(sdk.runs.wait(thread.thread_id, "agent", { command: { resume: "yes" } }));
    expect(texts(resumed)).toEqual(["human:approve?", "ai:approved: yes"]);
    const done = await sdk.threads.get(thread.thread_id);
    expect(done.status).toBe("idle");
    expect(done.interrupts).toEqual({});
  });

  it("input null on an interrupt asks again; new input starts over", async () => {
    const thread = await sdk.threads.create();
    await held(sdk.runs.wait(thread.thread_id, "agent", { input: human("approve?") }));
    const again = await held(sdk.runs.wait(thread.thread_id, "agent", { input: null }));
    expect(again).toHaveProperty("__interrupt__");
    expect((await sdk.threads.get(thread.thread_id)).status).toBe("interrupted");
    const fresh = await held(sdk.runs.wait(thread.thread_id, "agent", { input: human("ping") }));
    expect(texts(fresh)).toEqual(["human:approve?", "human:ping", "ai:pong"]);
    expect((await sdk.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("command update adds messages and runs the node; goto runs the named node", async () => {
    const thread = await sdk.threads.create();
    await sdk.runs.wait(thread.thread_id, "agent", { input: human("hello"), interruptBefore: ["agent"] });
    const updated = await held(
      sdk.runs.wait(thread.thread_id, "agent", { command: { update: human("ping") } }),
    );
    expect(texts(updated)).toEqual(["human:hello", "human:ping", "ai:pong"]);
    const other = await sdk.threads.create();
    await sdk.runs.wait(other.thread_id, "agent", { input: human("hi"), interruptBefore: "*" });
    const went = await held(sdk.runs.wait(other.thread_id, "agent", { command: { goto: "agent" } }));
    expect(texts(went).slice(-1)).toEqual(["ai:hi"]);
  });

  it("a streamed run that interrupts sends __interrupt__ in updates", async () => {
    const thread = await sdk.threads.create();
    const parts: Part[] = [];
    const streamed = (async () => {
      for await (const part of sdk.runs.stream(thread.thread_id, "agent", {
        input: human("approve?"),
        streamMode: ["updates"],
      }))
        parts.push(part);
    })();
    await held(streamed);
    const updates = parts.filter((part) => part.event === "updates").map((part) => part.data);
    expect(updates.at(-1)).toMatchObject({
      __interrupt__: [{ value: { question: "Approve this request?" } }],
    });
  });
});

describe("SDK conformance: checkpoints, tasks, debug and events modes", () => {
  it("streams each checkpoint, the node's task and its result, debug frames and chain events", async () => {
    const thread = await sdk.threads.create();
    const parts: Part[] = [];
    const streamed = (async () => {
      for await (const part of sdk.runs.stream(thread.thread_id, "agent", {
        input: human("ping"),
        streamMode: ["checkpoints", "tasks", "debug", "events"],
      }))
        parts.push(part);
    })();
    await held(streamed);
    const of = (event: string) => parts.filter((part) => part.event === event).map((part) => part.data);
    const checkpoints = of("checkpoints") as Array<{ next: string[]; values: unknown }>;
    expect(checkpoints.map((c) => c.next)).toEqual([["__start__"], ["agent"], []]);
    expect(texts(checkpoints.at(-1)!.values)).toEqual(["human:ping", "ai:pong"]);
    const tasks = of("tasks") as Array<{ name: string; result?: unknown; error?: unknown }>;
    expect(tasks.map((t) => t.name)).toEqual(["agent", "agent"]);
    expect(tasks[1]).toMatchObject({ error: null });
    const debug = of("debug") as Array<{ type: string }>;
    expect(new Set(debug.map((d) => d.type))).toEqual(new Set(["checkpoint", "task", "task_result"]));
    const chain = of("events") as Array<{ event: string }>;
    expect(chain.map((e) => e.event)).toEqual(expect.arrayContaining(["on_chain_start", "on_chain_end"]));
  });
});
